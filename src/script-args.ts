/**
 * The command lines of the npm scripts that run a task directly (`npm run elections:import -- ...`,
 * `npm run municipios:import -- ...`): `--help` (or `-h`) prints the usage and exits 0, and an unknown
 * option or a missing value prints what is wrong and the usage on stderr and exits 2, never a Node stack.
 * Both happen before the configuration is read, so neither needs a database.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export function scriptArguments<T extends Options>(usage: string, options: T): ReturnType<typeof parseArgs<{ options: T }>>['values'] {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: false }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage.trimEnd()}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${usage.trimEnd()}\n`);
    process.exit(0);
  }
  return values as ReturnType<typeof parseArgs<{ options: T }>>['values'];
}
