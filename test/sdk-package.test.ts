/**
 * @palanque/sdk as a front-end repository gets it: `npm pack` in sdk/ (which builds it through
 * `prepack`), then the tarball installed from the registry alone into a new project outside this
 * repository (test/frontend/sdk-consumer, copied to a temporary folder). There the project's code
 * type-checks with a Vite app's compiler settings, runs against a real server, and the msw entry
 * imports once its optional peers are installed. The installed tree carries no server dependency.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { MSW_PEERS, npm, packSdk, root, versionOf } from './helpers/sdk-package.js';

const run = promisify(execFile);

/**
 * The installed tree of the SDK and its runtime dependencies (all of the consumer's node_modules but its
 * own TypeScript) stays under this: a server package pulled in by mistake would be far over it. Most of
 * it is the contract itself (its types and its JSON for the msw handlers), which grows with each
 * operation: 3.1 MiB at 135 operations (issue 25); ajv and its dependencies, which the msw entry's
 * request checks need, about 2.6 MiB (issue 46); the shared rules with libphonenumber's metadata, 0.4.
 */
const INSTALLED_BUDGET_BYTES = 8 * 1024 * 1024;
/** Packages of the server that must never reach a front end's node_modules. */
const SERVER_PACKAGES = ['express', 'sequelize', 'sqlite3', 'pg', 'pg-boss', 'ioredis', 'nodemailer', 'pino', 'commander'];

let work = '';
let tarball = '';
let consumer = '';
/**
 * The consumer project compiled once (type-checked and emitted to out/), for the two tests that need it:
 * each tsc run over the contract's types takes 10 to 20 s on a loaded 2-core machine.
 */
let compiled: Promise<string> | undefined;
const compileConsumer = () => (compiled ??= tsc(consumer, []));
/** A test that runs the compiler or npm: minutes, not seconds, on a loaded machine. */
const SLOW_TEST_MS = 180_000;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'palanque-sdk-package-'));
  tarball = await packSdk(work);
  consumer = join(work, 'consumer');
  cpSync(join(root, 'test', 'frontend', 'sdk-consumer'), consumer, { recursive: true });
  // TypeScript is the consumer's own compiler, at the version this repository uses.
  await npm(consumer, ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `typescript@${versionOf('typescript')}`]);
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('npm pack in sdk/', () => {
  it('gives a tarball of ES modules with a declaration beside each, and nothing of the server', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    for (const module of ['index', 'client', 'errors', 'helpers', 'retry', 'msw']) {
      expect(files, module).toContain(`package/dist/${module}.js`);
      expect(files, module).toContain(`package/dist/${module}.d.ts`);
    }
    expect(files).toContain('package/dist/schema.d.ts');
    expect(files).toContain('package/dist/openapi.json');
    expect(files.filter((file) => !file.startsWith('package/dist/') && !['package/package.json', 'package/README.md'].includes(file))).toEqual([]);
    // The shared rules the mock applies (packages/rules, not published) travel inside it, built.
    for (const rule of ['phones', 'recipients', 'candidacy-law', 'consent-sources']) expect(files, rule).toContain(`package/dist/rules/${rule}.js`);
  });
});

describe('the client entry', () => {
  it("imports none of the shared rules, nor libphonenumber: an app that only calls the API bundles none of the mock's rules", () => {
    const dist = join(consumer, 'node_modules', '@palanque', 'sdk', 'dist');
    const reached = importGraph(join(dist, 'index.js'));
    expect(reached.size).toBeGreaterThan(3);
    expect([...reached].filter((file) => file.includes(`${join(dist, 'rules')}/`) || file.includes('/mock/') || file.includes('msw'))).toEqual([]);
    expect([...reached].flatMap((file) => bareImportsOf(file)).filter((name) => name !== 'openapi-fetch')).toEqual([]);
  });
});

describe('installed into a project outside the repository', () => {
  it('brings its dependencies along (openapi-fetch, and ajv for the msw entry) and no server package', () => {
    const modules = join(consumer, 'node_modules');
    expect(existsSync(join(modules, '@palanque', 'sdk', 'dist', 'index.js'))).toBe(true);
    for (const name of SERVER_PACKAGES) expect(existsSync(join(modules, name)), name).toBe(false);
    // What the msw entry needs besides msw itself is a dependency (the client entry imports none of it);
    // msw and @mswjs/source are optional peers, which only a project that uses the mock installs.
    for (const name of ['openapi-fetch', 'ajv', 'ajv-formats']) expect(existsSync(join(modules, name)), name).toBe(true);
    for (const name of MSW_PEERS) expect(existsSync(join(modules, name)), name).toBe(false);
    // The shared rules travel built inside the SDK (dist/rules/), with what they need of these packages.
    for (const name of ['@palanque/rules', 'libphonenumber-js', '@brazilian-utils/brazilian-utils']) expect(existsSync(join(modules, name)), name).toBe(false);
    const installed = readdirSync(modules, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'typescript' && entry.name !== '@types');
    const bytes = installed.reduce((sum, entry) => sum + sizeOf(join(modules, entry.name)), 0);
    expect(bytes).toBeLessThan(INSTALLED_BUDGET_BYTES);
  });

  it("type-checks the project's code with a Vite app's settings (a call the contract refuses is a compile error)", async () => {
    await expect(compileConsumer()).resolves.toBe('');
  }, SLOW_TEST_MS);

  it('runs against a real server: logs in, creates an entity, lists and reads it, and gets the error model for an unknown id', async () => {
    const app = await startTestApp();
    try {
      const owner = await createUser(app);
      await compileConsumer();
      const { stdout } = await run(process.execPath, [join(consumer, 'out', 'client.js'), app.baseUrl, owner.user.username, owner.password], { cwd: consumer });
      const result = JSON.parse(stdout.trim()) as { user: string; created: number; listed: unknown; read: string; missing: string };
      expect(result.user).toBe(owner.user.username);
      expect(result.read).toBe('Maria Santos');
      expect(JSON.stringify(result.listed)).toContain('Maria da Silva Santos');
      expect(result.missing).toBe('not_found');
      await expectStored(app, result.created);
    } finally {
      await app.close();
    }
  }, SLOW_TEST_MS);

  it("imports @palanque/sdk/msw after the README's install line, and both mocks answer: the examples, and the stateful one with the server's rules", async () => {
    // Exactly the packages sdk/README.md tells a front end to install, and nothing else (issue 46: with
    // ajv left an optional peer, the README's line gave `Cannot find package 'ajv'`).
    const told = readmeInstallLine();
    expect(told.sort()).toEqual([...MSW_PEERS].sort());
    await npm(consumer, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...told.map((name) => `${name}@${versionOf(name)}`)]);
    const script = [
      "import { setupServer } from 'msw/node';",
      "import { createApiClient, PalanqueApiError } from '@palanque/sdk';",
      "import { DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD, createStatefulHandlers, handlers } from '@palanque/sdk/msw';",
      'const examples = setupServer(...handlers);',
      "examples.listen({ onUnhandledRequest: 'error' });",
      'const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });',
      "const page = (await api.GET('/api/municipios/')).data;",
      'examples.close();',
      // The stateful mock: the CPF's check digits and the phone rules are @palanque/rules', carried in dist/rules/.
      'const stateful = setupServer(...createStatefulHandlers().handlers);',
      "stateful.listen({ onUnhandledRequest: 'error' });",
      'const anonymous = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });',
      "const login = (await anonymous.POST('/api/auth/login', { body: { username: 'carlos.pereira', password: DEFAULT_MOCK_PASSWORD } })).data;",
      "const signed = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false, token: login.data.token });",
      "const refused = await signed.POST('/api/entidade/add/', { body: { nome: 'Maria', cpf: '529.982.247-24' }, params: { query: { tp: 'concorrente' } } }).then(() => [], (error) => (error instanceof PalanqueApiError ? error.details.map((detail) => detail.rule) : [String(error)]));",
      'stateful.close();',
      'console.log(JSON.stringify({ handlers: handlers.length, first: page.results[0].nome, refused }));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer });
    const result = JSON.parse(stdout.trim()) as { handlers: number; first: string; refused: string[] };
    expect(result.handlers).toBeGreaterThan(50);
    expect(result.first).toEqual(expect.any(String));
    expect(result.refused).toEqual(['cpf_check_digits']);
  }, SLOW_TEST_MS);
});

async function tsc(project: string, args: string[]): Promise<string> {
  const compiler = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    const { stdout } = await run(process.execPath, [compiler, '-p', project, ...args], { cwd: project });
    return stdout;
  } catch (error) {
    throw new Error(`tsc failed:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
  }
}

/** The packages sdk/README.md's install line names for the msw entry (`npm install --save-dev ... # for @palanque/sdk/msw only`). */
function readmeInstallLine(): string[] {
  const line = readFileSync(join(root, 'sdk', 'README.md'), 'utf8').split('\n').find((text) => /^npm install --save-dev .*# for @palanque\/sdk\/msw only/.test(text));
  if (!line) throw new Error('sdk/README.md has no install line for @palanque/sdk/msw');
  return line.replace(/#.*$/, '').trim().split(/\s+/).slice(3);
}

/** The modules a module reaches by its relative imports (static and dynamic), itself included. */
function importGraph(entry: string, reached = new Set<string>()): Set<string> {
  if (reached.has(entry)) return reached;
  reached.add(entry);
  for (const specifier of specifiersOf(entry)) if (specifier.startsWith('.')) importGraph(join(dirname(entry), specifier), reached);
  return reached;
}

/** The packages a module imports by name. */
function bareImportsOf(file: string): string[] {
  return specifiersOf(file).filter((specifier) => !specifier.startsWith('.'));
}

function specifiersOf(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  return [...code.matchAll(/(?:^|[\s;])(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)].map((match) => match[1] ?? match[2] ?? match[3]!);
}

function sizeOf(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

async function expectStored(app: TestApp, id: number): Promise<void> {
  const [rows] = await app.sequelize.query('SELECT nome FROM entities WHERE id = :id', { replacements: { id } });
  expect(rows).toEqual([{ nome: 'Maria da Silva Santos' }]);
}
