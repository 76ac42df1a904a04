/**
 * The admin CLI as the tests run it: the project built into a temporary folder of the test file's own
 * (tsc with the project's build config; the folder links back to node_modules, spec and fixtures), and
 * `node <folder>/dist/cli/palanque.js` run as a child process with its configuration file in that
 * folder. Not dist/: test/start-command.test.ts builds dist/ and serves from it at the same time, and
 * one build must not rewrite the files the other is running.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Standard input (closed at once without). */
  input?: string;
  /** Environment over a clean one (no PALANQUE_* or DATABASE_URL of the test's own). */
  env?: Record<string, string | undefined>;
  /** PALANQUE_CONFIG (the folder's config/palanque.json by default). */
  configFile?: string;
}

export interface BuiltCli {
  /** The temporary folder: the CLI's working directory, where tests write their files. */
  work: string;
  /** The built `palanque.js`. */
  bin: string;
  run(args: string[], options?: CliRunOptions): Promise<CliResult>;
  /** Removes the folder. */
  remove(): Promise<void>;
}

/** Builds the project into a new temporary folder, for `run` to start the CLI from. */
export async function buildCli(): Promise<BuiltCli> {
  const work = await mkdtemp(join(tmpdir(), 'palanque-cli-'));
  const buildDir = join(work, 'build');
  await mkdir(buildDir);
  // The runtime finds the project (the contract sdk/openapi.json, fixtures) by walking up from its files, and packages from node_modules.
  for (const entry of ['node_modules', 'sdk', 'fixtures', 'package.json']) await symlink(join(root, entry), join(buildDir, entry));
  // The project's build (tsconfig.build.json, which includes cli/); the type check is `npm run typecheck`'s job.
  const build = await runProcess(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(buildDir, 'dist'), '--noCheck'], root);
  if (build.code !== 0) throw new Error(`The build failed:\n${build.stdout}${build.stderr}`);
  const bin = join(buildDir, 'dist', 'cli', 'palanque.js');
  return {
    work,
    bin,
    run: (args, options = {}) => {
      const env: Record<string, string | undefined> = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PALANQUE_') && name !== 'DATABASE_URL'));
      Object.assign(env, { PALANQUE_CONFIG: options.configFile ?? join(work, 'config', 'palanque.json'), NO_COLOR: '1' }, options.env);
      return runProcess(process.execPath, [bin, ...args], work, env, options.input ?? '');
    },
    remove: () => rm(work, { recursive: true, force: true }),
  };
}

/** Runs a command to its end; stdin gets `input` when given (else it is not open). */
export function runProcess(command: string, args: string[], cwd: string, env?: Record<string, string | undefined>, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: (env ?? process.env) as NodeJS.ProcessEnv, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(input);
  });
}

/** The output of a run, for failure messages. */
export const shown = (result: CliResult) => `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
