#!/usr/bin/env node
/**
 * `palanque`: the admin command line (see cli/README.md, or `palanque --help`).
 * Exit codes: 0 ok, 1 other failure, 2 usage error, 3 API error, 4 network error.
 */
import { run } from './program.js';

// `palanque ... | head`: a reader that stops early is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await run(process.argv);
process.exitCode = code;
// Whatever might still hold the event loop (a keep-alive socket, a terminal prompt) must not keep a
// finished command waiting; an idle process exits before this fires.
setTimeout(() => process.exit(code), 2_000).unref();
