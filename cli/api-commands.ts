/**
 * One command per operation of the contract, built from cli/spec-operations.ts (what the operation
 * takes) and cli/operations.ts (its name and examples):
 *
 * - path parameters are arguments (`accounts get <user_id>`);
 * - query and header parameters are options named after them (`--tp`, `--hub-mode`, `--x-twilio-signature`),
 *   with the spec's allowed values, and mandatory when the spec requires them;
 * - a body is given with `--file <path>` (`-` reads standard input) or `--data <json>`, and a small one
 *   also field by field (`--title`, `--url`), which override the fields of the file;
 * - a paginated list takes `--all` to follow every page.
 *
 * Every call goes through the SDK client (its key, request id, idempotency key, retries and errors).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { municipalityPages, PalanqueApiError, type MunicipalityQuery } from '../sdk/index.js';
import { contextOf, type Context } from './context.js';
import { withExamples, withGroupExamples } from './examples.js';
import { UsageError } from './errors.js';
import { readJsonInput, readTextInput } from './input.js';
import { COMMANDS, GROUPS, type OperationId } from './operations.js';
import { isPage, printAnswer, printJson, printRows } from './output.js';
import { progressBar } from './progress.js';
import { addBulkSendOptions, bulkSendRequested, sendInBatches } from './sms.js';
import { FORMER_COMMANDS } from './former-commands.js';
import { addRejectOptions, refuseRejectedLines } from './rejects.js';
import { SPEC_OPERATIONS } from './spec-operations.js';
import type { SpecOperation, SpecParameter, SpecValue } from './spec-types.js';

/** `sms send` checks a bulk send's whole list with the preview before the first batch (cli/sms.ts). */
const PREVIEW_OPERATION = SPEC_OPERATIONS.find((operation) => operation.operationId === 'previewSmsCampaign')!;

/** Flags every command has already (global options and the body options). */
const RESERVED_FLAGS = new Set(['help', 'version', 'json', 'envelope', 'profile', 'base-url', 'mock', 'retry', 'no-retry', 'request-id', 'idempotency-key', 'file', 'data', 'all']);

/** The command of each operation, by operationId (filled as commands are built; tests read it). */
export const commandOfOperation = new Map<string, Command>();

export function flagOf(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
}

/**
 * Commands that some options turn into a task of this machine instead of the call (`elections import
 * --file`, cli/admin/commands.ts): the task says whether it ran.
 */
const localTasks = new Map<Command, (command: Command) => Promise<boolean>>();

export function takeOverWith(command: Command, task: (command: Command) => Promise<boolean>): void {
  localTasks.set(command, task);
}

/** Operations whose `--file` names a file that a task of this machine imports (cli/admin/commands.ts), not the request body: that is `--data` or the field options. */
const FILE_IS_LOCAL: ReadonlySet<string> = new Set(['startElectionsImport']);

/** The group command `name` under the program, created on first use. */
export function groupCommand(program: Command, name: string): Command {
  const existing = program.commands.find((command) => command.name() === name);
  if (existing) return existing;
  return withGroupExamples(program.command(name).description(GROUPS[name] ?? name));
}

interface Binding {
  option: Option;
  value: SpecValue;
  target: 'query' | 'header' | 'field';
}

export function addApiCommands(program: Command): void {
  for (const name of Object.keys(GROUPS)) groupCommand(program, name);
  for (const operation of SPEC_OPERATIONS) {
    const naming = COMMANDS[operation.operationId as OperationId];
    if (!naming) throw new Error(`cli/operations.ts names no command for ${operation.operationId}: add one`);
    if (naming.custom) continue;
    const parent = naming.path.length === 2 ? groupCommand(program, naming.path[0]) : program;
    const name = naming.path[naming.path.length - 1]!;
    const command = parent.command(name).description(operation.summary);
    commandOfOperation.set(operation.operationId, command);
    buildOperationCommand(command, operation, naming.flags ?? {}, naming.examples ?? []);
  }
  // Former names, kept hidden, each running its operation with a note on stderr (cli/former-commands.ts).
  for (const former of FORMER_COMMANDS) {
    const operation = SPEC_OPERATIONS.find((candidate) => candidate.operationId === former.operationId)!;
    const naming = COMMANDS[former.operationId];
    const command = groupCommand(program, former.path[0]).command(former.path[1], { hidden: true }).description(`${operation.summary} (now: palanque ${naming.path.join(' ')})`);
    buildOperationCommand(command, operation, naming.flags ?? {}, naming.examples ?? []);
    command.hook('preAction', (_self, action) => void process.stderr.write(former.note(action.opts())));
  }
}

function buildOperationCommand(command: Command, operation: SpecOperation, renames: Readonly<Record<string, string>>, examples: readonly string[]): void {
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
  for (const parameter of pathParameters) {
    command.argument(`<${parameter.name}>`, parameter.description || parameter.name, parserOf(parameter));
  }

  const used = new Set(RESERVED_FLAGS);
  const bindings: Binding[] = [];
  const bind = (value: SpecValue, target: Binding['target'], prefix: string) => {
    let flag = renames[value.name] ?? flagOf(value.name);
    if (used.has(flag)) flag = `${prefix}-${flag}`;
    if (used.has(flag)) throw new Error(`${operation.operationId}: two options would be --${flag}`);
    used.add(flag);
    const option = new Option(`--${flag} <${placeholderOf(value)}>`, describe(value, target));
    if (value.enum) option.choices(value.enum);
    option.argParser(parserOf(value));
    if (value.required && target !== 'field') option.makeOptionMandatory();
    command.addOption(option);
    bindings.push({ option, value, target });
  };
  for (const parameter of operation.parameters) {
    if (parameter.in === 'query') bind(parameter, 'query', 'query');
  }
  for (const parameter of operation.parameters) {
    if (parameter.in === 'header') bind(parameter, 'header', 'header');
  }
  if (operation.body) {
    const text = isTextBody(operation);
    if (FILE_IS_LOCAL.has(operation.operationId)) command.option('--file <path>', 'a file of this machine, imported into the database directly (a database task, no server needed; see below)');
    else command.option('--file <path>', `the request body (${operation.body.contentType}), as a ${text ? '' : 'JSON '}file; - reads standard input`);
    command.option(text ? '--data <text>' : '--data <json>', `the request body, as ${text ? 'text' : 'JSON text'}`);
    if (operation.operationId === 'sendSmsCampaign') addBulkSendOptions(command, used);
    if (operation.operationId === 'importContacts') addRejectOptions(command, used);
    for (const field of operation.body.fields) bind(field, 'field', 'field');
  }
  if (operation.paged) command.option('--all', 'follow every page and print all the results (with a progress bar on a terminal)');

  withExamples(command, examples, helpTextOf(operation));
  command.action(async (...args: unknown[]) => {
    const self = args[args.length - 1] as Command;
    if (await localTasks.get(self)?.(self)) return;
    const context = await contextOf(self);
    const path = Object.fromEntries(pathParameters.map((parameter, index) => [parameter.name, args[index]]));
    const values = (target: Binding['target']) =>
      Object.fromEntries(
        bindings
          .filter((binding) => binding.target === target)
          .map((binding) => [binding.value.name, self.getOptionValue(binding.option.attributeName())])
          .filter(([, value]) => value !== undefined),
      );
    const query = values('query');
    const header = values('header');
    const options = self.opts();

    let body: unknown;
    if (operation.body) {
      const read = isTextBody(operation) ? readTextInput : readJsonInput;
      body = await read(options.file as string | undefined, options.data as string | undefined);
      const fields = values('field');
      if (Object.keys(fields).length > 0) {
        if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw new UsageError('the field options can only add to a body that is a JSON object');
        body = { ...(body as object | undefined), ...fields };
      }
      if (operation.operationId === 'sendSmsCampaign' && bulkSendRequested(options)) {
        // Each batch carries its own idempotency key (cli/sms.ts), and a preview carries none of the user's.
        const { 'Idempotency-Key': _userKey, ...headers } = context.headers;
        const { 'Idempotency-Key': _userParameter, ...header_ } = header;
        const withKey = (key: string | undefined): Context => ({ ...context, headers: key ? { ...headers, 'Idempotency-Key': key } : headers });
        await sendInBatches(context, (body ?? {}) as Record<string, unknown>, options, {
          send: (campaign, key) => call(withKey(key), operation, { path, query, header: header_, body: campaign }),
          preview: (campaign) => call(withKey(undefined), PREVIEW_OPERATION, { path: {}, query: {}, header: {}, body: campaign }),
        });
        return;
      }
      if (body === undefined && operation.body.required) {
        const fieldFlags = bindings.filter((binding) => binding.target === 'field').map((binding) => binding.option.long);
        throw new UsageError(`this command needs a request body: --file <path>, --data <json>${fieldFlags.length ? ` or the options ${fieldFlags.join(', ')}` : ''}`);
      }
    }

    if (operation.paged && options.all) {
      await printAllPages(context, operation, path, query, header);
      return;
    }
    const answer = await call(context, operation, { path, query, header, body });
    if (answer !== NOT_MODIFIED) printAnswer(context.output, answer);
    if (operation.operationId === 'importContacts') refuseRejectedLines(context.output, answer, Boolean(options.allowRejects));
  });
}

const NOT_MODIFIED = Symbol('not modified');

interface CallParameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  body: unknown;
}

/** One call of the operation through the SDK client; returns the answer's body (JSON or text). */
async function call(context: Context, operation: SpecOperation, { path, query, header, body }: CallParameters): Promise<unknown> {
  const form = operation.body?.contentType === 'application/x-www-form-urlencoded';
  // A text body (a CSV file) goes as it was read, with its own media type.
  const text = isTextBody(operation);
  const contentType = form ? 'application/x-www-form-urlencoded' : text ? operation.body!.contentType : undefined;
  const init = {
    params: { path, query, header },
    ...(body !== undefined ? { body } : {}),
    ...(text ? { bodySerializer: (value: unknown) => value } : {}),
    headers: { ...context.headers, ...(contentType && body !== undefined ? { 'Content-Type': contentType } : {}) },
    parseAs: /json/.test(operation.answer) ? 'json' : 'text',
  };
  const request = context.client.request as unknown as (method: string, path: string, init: unknown) => Promise<{ data?: unknown }>;
  try {
    const { data } = await request(operation.method, operation.path, init);
    return data;
  } catch (error) {
    // With If-None-Match, 304 is the good news that the copy one has is current.
    if (error instanceof PalanqueApiError && error.status === 304) {
      context.output.stderr.write('Not modified (304): the version you have is current.\n');
      return NOT_MODIFIED;
    }
    throw error;
  }
}

/**
 * `--all`: every page, one after the other (following `links.next`), printed as one list: one table, or
 * with `--json` one array of every page's items; with `--envelope`, an array of every page's whole answer.
 */
async function printAllPages(context: Context, operation: SpecOperation, path: Record<string, unknown>, query: Record<string, unknown>, header: Record<string, unknown>): Promise<void> {
  const progress = progressBar(COMMANDS[operation.operationId as OperationId].path.join(' '), 'pages', { json: context.output.json });
  const results: unknown[] = [];
  const answers: unknown[] = [];
  try {
    for await (const { page, answer } of pagesOf(context, operation, path, query, header)) {
      progress.setTotal(page.total_pages);
      progress.increment();
      results.push(...page.results);
      answers.push(answer);
    }
  } finally {
    progress.stop();
  }
  if (context.output.envelope) printJson(context.output, answers);
  else if (context.output.json) printJson(context.output, results);
  else {
    printRows(context.output, results);
    context.output.stdout.write(`${results.length} result(s)\n`);
  }
}

type Page = { results: unknown[]; total_pages: number; links: { next?: string | null } };

/** Each page, with the answer it came in (the envelope, as received). */
async function* pagesOf(context: Context, operation: SpecOperation, path: Record<string, unknown>, query: Record<string, unknown>, header: Record<string, unknown>): AsyncGenerator<{ page: Page; answer: unknown }> {
  if (operation.operationId === 'listMunicipalities' && !context.output.envelope) {
    // The SDK's own pager for the municipality list (it gives the pages without their envelopes).
    for await (const page of municipalityPages(context.client, query as MunicipalityQuery)) yield { page, answer: page };
    return;
  }
  let next: Record<string, unknown> | undefined = query;
  while (next) {
    const answer = await call(context, operation, { path, query: next, header, body: undefined });
    const page = answer && typeof answer === 'object' && 'data' in answer ? (answer as { data: unknown }).data : answer;
    if (!isPage(page)) throw new Error(`${operation.operationId} did not answer a page`);
    yield { page, answer };
    next = page.links.next ? Object.fromEntries(new URL(page.links.next).searchParams) : undefined;
  }
}

/** A body the operation takes as text (`text/csv`), not as JSON: `--file` and `--data` give it as it is. */
function isTextBody(operation: SpecOperation): boolean {
  return operation.body?.contentType.startsWith('text/') ?? false;
}

function placeholderOf(value: SpecValue): string {
  if (value.enum) return 'value';
  if (value.type === 'boolean') return 'true|false';
  return value.type === 'string' ? 'text' : value.type;
}

function describe(value: SpecValue, target: Binding['target']): string {
  const where = target === 'field' ? `body field ${value.name}` : target === 'header' ? `header ${value.name}` : `${value.name}`;
  const required = value.required && target === 'field' ? ', required' : '';
  return `${value.description || value.name} (${where}${required})`.replace(/\.\s*\(/, ' (');
}

function parserOf(value: SpecValue | SpecParameter): (input: string) => unknown {
  switch (value.type) {
    case 'integer':
      return (input) => {
        if (value.enum && !value.enum.includes(input)) throw new InvalidArgumentError(`Allowed choices are ${value.enum.join(', ')}.`);
        if (!/^-?\d+$/.test(input)) throw new InvalidArgumentError('Not an integer.');
        return Number(input);
      };
    case 'number':
      return (input) => {
        const number = Number(input);
        if (input.trim() === '' || !Number.isFinite(number)) throw new InvalidArgumentError('Not a number.');
        return number;
      };
    case 'boolean':
      return (input) => {
        if (input !== 'true' && input !== 'false') throw new InvalidArgumentError('Allowed choices are true, false.');
        return input === 'true';
      };
    default:
      return (input) => {
        if (value.enum && !value.enum.includes(input)) throw new InvalidArgumentError(`Allowed choices are ${value.enum.join(', ')}.`);
        return input;
      };
  }
}

function helpTextOf(operation: SpecOperation): string {
  const lines = [''];
  if (operation.description) lines.push(operation.description, '');
  lines.push(`Calls ${operation.method.toUpperCase()} ${operation.path} (operation ${operation.operationId}; ${operation.auth ? 'needs a key: palanque login' : 'no key needed'}).`);
  if (operation.body && FILE_IS_LOCAL.has(operation.operationId)) {
    lines.push(`Body: ${operation.body.contentType}, with --data <json>, or field by field with the options above (they override it).`);
  } else if (operation.body) {
    lines.push(
      `Body: ${operation.body.contentType}${operation.body.required ? '' : ' (optional)'}, with --file <path> (- for standard input) or --data <${isTextBody(operation) ? 'text' : 'json'}>` +
        (operation.body.fields.length > 0 ? ', or field by field with the options above (they override the file).' : '.'),
    );
  }
  if (operation.paged) lines.push('A page at a time: --page <n>, or --all for every page.');
  return lines.join('\n');
}
