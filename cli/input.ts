/** Reading what the user types or pipes: standard input, JSON bodies, prompts (on stderr, never echoing a password). */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { UsageError } from './errors.js';

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A password piped on standard input (`--password-stdin`): its first line, without the line break. */
export async function passwordFromStdin(): Promise<string> {
  const text = await readStdin();
  const password = text.split(/\r?\n/)[0] ?? '';
  if (!password) throw new UsageError('--password-stdin: standard input holds no password');
  return password;
}

/** Passwords piped on standard input, one a line (`--password-stdin` of `palanque password`: the current one, then the new one). */
export async function passwordsFromStdin(count: number): Promise<string[]> {
  const lines = (await readStdin()).split(/\r?\n/).slice(0, count);
  if (lines.length < count || lines.some((line) => line === '')) throw new UsageError(`--password-stdin: standard input must hold ${count} passwords, one a line`);
  return lines;
}

/** Asks for a password on the terminal without echoing it (masked with `*`). */
export async function promptPassword(message: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError('there is no terminal to ask for the password: pipe it with --password-stdin');
  const { default: password } = await import('@inquirer/password');
  return password({ message, mask: '*' }, { output: process.stderr });
}

/** Asks for a line of text on the terminal (the prompt goes to stderr, so stdout stays clean). */
export async function promptLine(message: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`there is no terminal to ask for it: ${message.replace(/:\s*$/, '')} must be given as an option`);
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await readline.question(message)).trim();
  } finally {
    readline.close();
  }
}

/** A text body (a CSV file) from `--file <path>` (`-` for standard input) or `--data <text>`, as it is. */
export async function readTextInput(file: string | undefined, data: string | undefined): Promise<string | undefined> {
  if (file !== undefined && data !== undefined) throw new UsageError('give the body with --file or --data, not both');
  if (file === undefined) return data;
  try {
    return file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--file: cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
}

/** A JSON document from `--file <path>` (`-` for standard input) or `--data <json>`. */
export async function readJsonInput(file: string | undefined, data: string | undefined): Promise<unknown> {
  if (file !== undefined && data !== undefined) throw new UsageError('give the body with --file or --data, not both');
  if (file === undefined && data === undefined) return undefined;
  let text: string;
  let source: string;
  if (file !== undefined) {
    source = file === '-' ? 'standard input' : file;
    try {
      text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--file: cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
  } else {
    source = '--data';
    text = data!;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
}
