/**
 * What the admin CLI prints for scripts and for people (issue 46 §4), the built binary run as a child
 * process: `--json` on a paged list prints the array of items (`| jq '.[]'` works), `--all` every page's
 * in one array, `--envelope` the whole answer (every page's with `--all`); under `--json` an error is one
 * JSON line on stderr, with the exit code it always had; compliance warnings are printed whole under a
 * table, never cut to a cell; and `sms send` names only the options that are really missing.
 * Against a live test server, and a scripted one for answers with long warnings.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, runProcess, shown, type BuiltCli, type CliRunOptions } from './helpers/cli.js';
import { freePort } from './helpers/process.js';

let built: BuiltCli;
let app: TestApp;
let admin: TestUser;
/** Users in all: the admin and 31 others, so listUsers (30 a page) has two pages. */
const USERS = 32;

const cli = (args: string[], options?: CliRunOptions) => built.run(args, options);
const asAdmin = (args: string[]) => cli(args, { env: { PALANQUE_BASE_URL: app.baseUrl, PALANQUE_TOKEN: admin.key } });
/** The last line of stderr as JSON (the error report under --json; notices such as retries come before it). */
const errorReport = (stderr: string) => JSON.parse(stderr.trimEnd().split('\n').at(-1)!) as Record<string, any>;

beforeAll(async () => {
  built = await buildCli();
  app = await startTestApp();
  admin = await createAdmin(app);
  for (let user = 1; user < USERS; user += 1) await createUser(app);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await built?.remove();
});

describe('--json on a paged list', () => {
  it('prints the array of the page\'s items, which jq iterates', async () => {
    const page = await asAdmin(['accounts', 'list', '--json']);
    expect(page.code, shown(page)).toBe(0);
    const items = JSON.parse(page.stdout) as Array<{ id: number; username: string }>;
    expect(Array.isArray(items), page.stdout.slice(0, 200)).toBe(true);
    expect(items).toHaveLength(30);
    expect(items[0]).toMatchObject({ id: admin.user.id, username: admin.user.username });

    // `palanque accounts list --json | jq '.[]'`, as the issue wrote it.
    const piped = await runProcess('sh', ['-c', `'${process.execPath}' '${built.bin}' accounts list --json | jq -c '.[] | .username'`], built.work, {
      ...process.env,
      PALANQUE_BASE_URL: app.baseUrl,
      PALANQUE_TOKEN: admin.key,
      PALANQUE_CONFIG: `${built.work}/none.json`,
    });
    expect(piped.code, shown(piped)).toBe(0);
    expect(piped.stdout.trim().split('\n')).toEqual(items.map((item) => JSON.stringify(item.username)));
  });

  it('with --all, prints every page\'s items in one array', async () => {
    const all = await asAdmin(['accounts', 'list', '--all', '--json']);
    expect(all.code, shown(all)).toBe(0);
    const items = JSON.parse(all.stdout) as Array<{ id: number }>;
    expect(items).toHaveLength(USERS);
    expect(new Set(items.map((item) => item.id)).size).toBe(USERS);
  });

  it('with --envelope, prints the whole answer as received: the page with its count and links (every page\'s with --all)', async () => {
    const envelope = await asAdmin(['accounts', 'list', '--envelope']);
    expect(envelope.code, shown(envelope)).toBe(0);
    const answer = JSON.parse(envelope.stdout);
    expect(answer).toMatchObject({ success: true, request_id: expect.any(String), data: { count: USERS, total_pages: 2, links: { next: expect.stringContaining('page=2'), previous: null } } });
    expect(answer.data.results).toHaveLength(30);

    const pages = await asAdmin(['accounts', 'list', '--all', '--envelope']);
    expect(pages.code, shown(pages)).toBe(0);
    const answers = JSON.parse(pages.stdout) as Array<{ success: boolean; data: { results: unknown[]; links: { next: string | null } } }>;
    expect(answers.map((each) => [each.success, each.data.results.length, each.data.links.next === null])).toEqual([
      [true, 30, false],
      [true, 2, true],
    ]);
  });

  it('leaves an answer that is no page as its data', async () => {
    const me = await asAdmin(['accounts', 'get', String(admin.user.id), '--json']);
    expect(me.code, shown(me)).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ id: admin.user.id });
  });
});

describe('errors under --json', () => {
  it('an API error: one JSON line on stderr with the error model, the status and the request id; exit 3', async () => {
    const missing = await asAdmin(['accounts', 'get', '2147483647', '--json', '--request-id', 'cli-json-404']);
    expect(missing.code, shown(missing)).toBe(3);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trimEnd().split('\n'), shown(missing)).toHaveLength(1);
    expect(errorReport(missing.stderr)).toEqual({
      error: { code: 'not_found', message: expect.any(String), details: expect.any(Array) },
      status: 404,
      request_id: 'cli-json-404',
      exit_code: 3,
    });
    // Validation errors keep their details (field, rule, value).
    const invalid = await asAdmin(['municipios', 'list', '--uf', '99', '--envelope']);
    expect(invalid.code, shown(invalid)).toBe(3);
    expect(errorReport(invalid.stderr)).toMatchObject({ status: 400, error: { code: 'bad_request', details: [expect.objectContaining({ field: 'codigo_uf', rule: 'maximum', value: 99 })] }, exit_code: 3 });
  });

  it('a usage error, commander\'s or ours: JSON, exit 2, and nothing of commander\'s text', async () => {
    const unknown = await cli(['accounts', 'list', '--json', '--no-such-option']);
    expect(unknown.code, shown(unknown)).toBe(2);
    expect(unknown.stderr.trimEnd().split('\n'), shown(unknown)).toHaveLength(1);
    expect(errorReport(unknown.stderr)).toEqual({ error: { code: 'usage_error', message: expect.stringContaining("unknown option '--no-such-option'"), details: [] }, exit_code: 2 });

    const noBody = await cli(['entities', 'add', '--json', '--data', '{not json']);
    expect(noBody.code, shown(noBody)).toBe(2);
    expect(errorReport(noBody.stderr)).toMatchObject({ error: { code: 'usage_error', message: expect.any(String) }, exit_code: 2 });
  });

  it('a server that cannot be reached: JSON, exit 4', async () => {
    const refused = await cli(['status', '--json', '--no-retry', '--base-url', `http://127.0.0.1:${await freePort()}`]);
    expect(refused.code, shown(refused)).toBe(4);
    expect(errorReport(refused.stderr)).toMatchObject({ error: { code: 'network_error', message: expect.stringContaining('ECONNREFUSED') }, exit_code: 4 });
  });

  it('without --json, the report stays text for people', async () => {
    const missing = await asAdmin(['accounts', 'get', '2147483647']);
    expect(missing.code, shown(missing)).toBe(3);
    expect(missing.stderr).toMatch(/^Error 404 not_found: /m);
  });
});

describe('sms send without some of its options', () => {
  const args = ['sms', 'send', '--message', 'Olá', '--to', '21 98765-4321', '--base-url', 'http://127.0.0.1:9', '--no-retry'];

  it('names only the options that are missing', async () => {
    const noTitle = await cli([...args, '--credential', '3']);
    expect(noTitle.code, shown(noTitle)).toBe(2);
    expect(noTitle.stderr).toContain('sms send needs --title (or titulo in --file/--data)');
    expect(noTitle.stderr).not.toContain('--credential');

    const noCredential = await cli([...args, '--title', 'Convite']);
    expect(noCredential.code, shown(noCredential)).toBe(2);
    expect(noCredential.stderr).toContain('sms send needs --credential (or credencial in --file/--data)');
    expect(noCredential.stderr).not.toContain('--title');

    const neither = await cli(args);
    expect(neither.stderr).toContain('sms send needs --title and --credential (or titulo and credencial in --file/--data)');
  });
});

describe('compliance warnings in tables', () => {
  let server: Server;
  let url = '';
  let answer = '';
  // Longer than any cell: a table would have cut them.
  const consent = 'Consent is missing for 3 number(s) of the list: electoral law lets a campaign message only people who gave their number voluntarily, so record their consent (contacts add --consent-source) or leave them out.';
  const window = 'Today (2026-11-29, in Brasília) is outside the entity\'s propaganda window: electoral propaganda is allowed from 16 August of the election year until the eve of the vote.';
  const warnings = [
    { rule: 'consent_missing', message: consent, numbers: 3, examples: ['+55*******0001'] },
    { rule: 'outside_campaign_window', message: window, day: '2026-11-29' },
  ];
  const envelope = (data: unknown) => JSON.stringify({ success: true, data, message: 'ok', request_id: 'scripted' });

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("prints a campaign's warnings whole under its table", async () => {
    answer = envelope({ id: 7, titulo: 'Convite', credencial: 3, accepted: 3, rejected: 0, state: 'sending', warnings });
    const result = await cli(['sms', 'campaign', '7', '--base-url', url]);
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toMatch(/warnings\s*│ consent_missing, outside_campaign_window/);
    expect(result.stdout).toContain(`  - consent_missing: ${consent}\n`);
    expect(result.stdout).toContain(`  - outside_campaign_window: ${window}\n`);
    // --json is untouched: the warnings as the server sent them.
    const json = await cli(['sms', 'campaign', '7', '--base-url', url, '--json']);
    expect(JSON.parse(json.stdout).warnings).toEqual(warnings);
  });

  it("prints a preview's compliance warnings whole under its table", async () => {
    answer = envelope({ text: 'Olá', footer: null, encoding: 'GSM-7', segments: 1, messages: 3, total_segments: 3, compliance: { mode: 'warn', warnings, would_refuse: false } });
    const result = await cli(['sms', 'preview', '--base-url', url, '--data', JSON.stringify({ titulo: 'Convite', credencial: 3, mensagem: { mensagem: 'Olá', recipient_list_str: '21 98765-4321' } })]);
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toContain('compliance.warnings:\n');
    expect(result.stdout).toContain(`  - consent_missing: ${consent}\n`);
    expect(result.stdout).toContain(`  - outside_campaign_window: ${window}\n`);
  });

  it('names the rules of each row in a list, in full', async () => {
    answer = envelope({ count: 1, total_pages: 1, links: { next: null, previous: null }, results: [{ id: 7, titulo: 'Convite', state: 'sending', warnings }] });
    const result = await cli(['sms', 'campaigns', '--entity-id', '1', '--base-url', url]);
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toMatch(/│ consent_missing, outside_campaign_window\s*│/);
  });
});
