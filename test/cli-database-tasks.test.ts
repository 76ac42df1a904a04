/**
 * The admin CLI's database tasks, as an admin runs them on a database of their own (test/helpers/cli.ts
 * builds the binary): db migrate, municipios import (a file, a missing one, an unreachable download),
 * db seed, user create --admin and user set-password (each leaving the API's audit event, naming the
 * operating-system user who ran it), then logging in with that user on a second server
 * and a second profile; a database URL the CLI cannot use; elections import --file (a court file into
 * the database: the summary, --json, Ctrl-C reporting what was committed) and the import scripts' --help. Unlike test/cli.test.ts, this runs on
 * PostgreSQL too (TEST_DATABASE_URL): these commands write the database themselves.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_MUNICIPIOS, startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, runProcess, shown, type BuiltCli, type CliResult, type CliRunOptions } from './helpers/cli.js';
import { COURT_COLUMNS_2024, courtCsv, generateCandidacies, sampleCandidacy } from './helpers/court-files.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort } from './helpers/process.js';

let built: BuiltCli;
let work: string;
const cli = (args: string[], options?: CliRunOptions) => built.run(args, options);

beforeAll(async () => {
  built = await buildCli();
  work = built.work;
}, 180_000);

afterAll(async () => {
  await built?.remove();
});

describe('database tasks', () => {
  let database: TestDatabase;
  let second: TestApp | undefined;
  const env = () => ({ DATABASE_URL: database.url, PASSWORD_HASH_COST: '12', MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await second?.close();
    await database?.drop();
  });

  it('db migrate applies the migrations once', async () => {
    const first = await cli(['db', 'migrate'], { env: env() });
    expect(first.code, shown(first)).toBe(0);
    expect(first.stdout).toMatch(/^Applied \d+ migration\(s\) to /);
    expect(first.stdout).toContain('0001-municipalities');
    const again = await cli(['db', 'migrate', '--json'], { env: env() });
    expect(again.code, shown(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ applied: [] });
  });

  it('municipios import loads the list, and db seed the demo data', async () => {
    const imported = await cli(['municipios', 'import', '--source', SHARED_MUNICIPIOS, '--json'], { env: env() });
    expect(imported.code, shown(imported)).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 5570, inserted: 5570, updated: 0 });
    const badSource = await cli(['municipios', 'import', '--source', join(work, 'nowhere.csv')], { env: env() });
    expect(badSource.code, shown(badSource)).toBe(1);
    expect(badSource.stderr).toContain('Cannot open');
    expect(badSource.stderr).not.toContain('--source <file');
    // No --source, and the download fails (offline): the message says to pass one.
    const offline = await cli(['municipios', 'import'], { env: { ...env(), MUNICIPIOS_SOURCE: `http://127.0.0.1:${await freePort()}/municipios.csv` } });
    expect(offline.code, shown(offline)).toBe(1);
    expect(offline.stderr).toContain('Cannot download');
    expect(offline.stderr).toContain('pass it: palanque municipios import --source <file or URL>');

    const seeded = await cli(['db', 'seed', '--password-stdin'], { env: env(), input: 'senha-de-demonstracao\n' });
    expect(seeded.code, shown(seeded)).toBe(0);
    expect(seeded.stdout).toMatch(/Created \(\d+\):/);
    const again = await cli(['db', 'seed', '--json'], { env: env() });
    expect(again.code, shown(again)).toBe(0);
    const report = JSON.parse(again.stdout) as { entries: Array<{ outcome: string }> };
    expect(report.entries.every((entry) => entry.outcome !== 'created')).toBe(true);
  }, 60_000);

  it('user create --admin and user set-password, then that user logs in through the API', async () => {
    const created = await cli(['user', 'create', '--username', 'cli.admin', '--email', 'cli.admin@exemplo.com.br', '--first-name', 'Cli', '--admin', '--password-stdin'], {
      env: env(),
      input: 'primeira-senha-longa\n',
    });
    expect(created.code, shown(created)).toBe(0);
    expect(created.stdout).toContain('Created admin cli.admin');
    const duplicate = await cli(['user', 'create', '--username', 'cli.admin', '--email', 'outro@exemplo.com.br', '--generate-password'], { env: env() });
    expect(duplicate.code, shown(duplicate)).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    const short = await cli(['user', 'create', '--username', 'curta', '--email', 'curta@exemplo.com.br', '--password-stdin'], { env: env(), input: 'curta\n' });
    expect(short.code, shown(short)).toBe(2);

    const changed = await cli(['user', 'set-password', 'cli.admin@exemplo.com.br', '--password-stdin'], { env: env(), input: 'segunda-senha-longa\n' });
    expect(changed.code, shown(changed)).toBe(0);
    expect(changed.stdout).toContain('Password of cli.admin');

    // A second server, in a profile of its own (the configuration file's first, so its current one).
    second = await startTestApp({ database });
    const login = ['login', '--profile', 'admin-db', '--base-url', second.baseUrl, '-u', 'cli.admin', '--password-stdin'];
    const oldPassword = await cli(login, { input: 'primeira-senha-longa\n' });
    expect(oldPassword.code, shown(oldPassword)).toBe(3);
    expect(oldPassword.stderr).toMatch(/^Error 401 /m);
    const loggedIn = await cli(login, { input: 'segunda-senha-longa\n' });
    expect(loggedIn.code, shown(loggedIn)).toBe(0);
    const whoami = await cli(['whoami', '--json'], { env: { PALANQUE_PROFILE: 'admin-db' } });
    expect(JSON.parse(whoami.stdout)).toMatchObject({ username: 'cli.admin', first_name: 'Cli', is_admin: true });

    // Both tasks left the API's audit events, naming the operating-system user who ran them (the refused ones none).
    const id = JSON.parse(whoami.stdout).id as number;
    const { rows } = await second.accounts.audit.page({}, 1, 100);
    const ranBy = { via: 'cli', os_user: userInfo().username, host: hostname() };
    expect(rows.filter((row) => row.details.via === 'cli').map(({ event, actor_id, user_id, details }) => ({ event, actor_id, user_id, details }))).toEqual([
      { event: 'password_changed', actor_id: null, user_id: id, details: { ...ranBy, keys_revoked: 0 } },
      { event: 'account_created', actor_id: null, user_id: id, details: { ...ranBy, is_admin: true } },
    ]);
    const status = await cli(['status', '-p', 'admin-db', '--json']);
    expect(status.code, shown(status)).toBe(0);
    const profiles = JSON.parse((await cli(['profile', 'list', '--json'])).stdout);
    expect(profiles.profiles).toContainEqual(expect.objectContaining({ name: 'admin-db', current: true, base_url: second.baseUrl, logged_in: true, username: 'cli.admin' }));
    expect(JSON.stringify(profiles)).not.toMatch(/plq_/);
  }, 180_000); // seven CLI runs, each a process loading the server's modules: a minute and more on a loaded machine

  it('reports a database it cannot use (exit 1)', async () => {
    const result = await cli(['db', 'migrate', '--database-url', 'mysql://nowhere/db']);
    expect(result.code, shown(result)).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
  });
});

/** A court file of `count` valid lines of the 2024 municipal election, plus a rejected one when asked (line 4). */
async function courtFile(name: string, count: number, withRejected = false): Promise<string> {
  const lines = [...generateCandidacies(count)];
  if (withRejected) lines.splice(2, 0, sampleCandidacy({ SQ_CANDIDATO: '250009999999', NR_CANDIDATO: '13X01' }));
  const path = join(built.work, name);
  await writeFile(path, courtCsv(lines, { columns: COURT_COLUMNS_2024 }));
  return path;
}

/**
 * `elections import --file`: Ctrl-C is sent at a known point with the test hook PALANQUE_TEST_IMPORT_PAUSE_MS
 * (cli/admin/elections.ts): the task says on stderr when a batch is committed and waits there until
 * Ctrl-C, so the signal always lands between the first and the second batch.
 */
describe('elections import --file (a database task)', () => {
  const databases: TestDatabase[] = [];
  const freshDatabase = async () => {
    const database = await createTestDatabase({ migrated: true });
    databases.push(database);
    return database;
  };
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('imports a court file and prints a summary, or the report with --json; a re-run changes nothing', async () => {
    const database = await freshDatabase();
    const env = { DATABASE_URL: database.url };
    const file = await courtFile('consulta_cand_2024_SP.csv', 12, true);

    const imported = await cli(['elections', 'import', '--file', file], { env });
    expect(imported.code, shown(imported)).toBe(0);
    expect(imported.stdout).toContain(`Imported ${file} into `);
    expect(imported.stdout).toMatch(/lines read\s*│ 13\b/);
    expect(imported.stdout).toMatch(/inserted\s*│ 12\b/);
    expect(imported.stdout).toMatch(/rejected\s*│ 1\b/);
    expect(imported.stdout).toMatch(/consulta_cand_2024_SP\.csv\s*│ 4\s*│ NR_CANDIDATO "13X01" is not a whole number/);
    expect(imported.stdout).toMatch(/consulta_cand_2024_SP\.csv\s*│ 13\b/); // the files table
    // No terminal: no progress bar, no control characters.
    expect(imported.stderr).not.toContain('\u001b[');

    const again = await cli(['elections', 'import', '--file', file, '--json'], { env });
    expect(again.code, shown(again)).toBe(0);
    const report = JSON.parse(again.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      interrupted: false,
      source: file,
      rows: 13,
      rows_read: 13,
      inserted: 0,
      unchanged: 12,
      rejected: 1,
      rejections: [{ file: 'consulta_cand_2024_SP.csv', line: 4, reason: 'NR_CANDIDATO "13X01" is not a whole number' }],
      files: [{ name: 'consulta_cand_2024_SP.csv', rows: 13 }],
      elections: [619],
    });
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);

    // A wrong digest writes nothing (exit 1); --file with --source is a usage error (exit 2).
    const wrongDigest = await cli(['elections', 'import', '--file', file, '--sha256', 'f'.repeat(64)], { env });
    expect(wrongDigest.code, shown(wrongDigest)).toBe(1);
    expect(wrongDigest.stderr).toContain('nothing was written');
    const both = await cli(['elections', 'import', '--file', file, '--source', 'https://cdn.tse.jus.br/x.zip'], { env });
    expect(both.code, shown(both)).toBe(2);
  }, 90_000);

  it('Ctrl-C after the first batch prints what was committed and exits 130; a re-run completes the import', async () => {
    const database = await freshDatabase();
    const file = await courtFile('consulta_cand_2024_interrompido.csv', 35);
    const interrupted = await interruptAfterFirstBatch(['elections', 'import', '--file', file, '--batch-size', '10'], { DATABASE_URL: database.url, PALANQUE_TEST_IMPORT_PAUSE_MS: '60000' });
    expect(interrupted.code, shown(interrupted)).toBe(130);
    expect(interrupted.stdout).toContain(`Interrupted: what was committed of ${file}`);
    expect(interrupted.stdout).toMatch(/committed\s*│ 10\b/);
    expect(interrupted.stdout).toMatch(/inserted\s*│ 10\b/);
    expect(interrupted.stderr).toContain('Stopped by Ctrl-C: the 10 lines above were committed');

    // Exactly the first batch was committed: the re-run finds 10 lines and inserts the other 25.
    const rerun = await cli(['elections', 'import', '--file', file, '--json'], { env: { DATABASE_URL: database.url } });
    expect(rerun.code, shown(rerun)).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ interrupted: false, rows: 35, unchanged: 10, inserted: 25 });
  }, 90_000);

  it('with --json, an interrupted import prints its committed counts as JSON', async () => {
    const database = await freshDatabase();
    const file = await courtFile('consulta_cand_2024_json.csv', 25, true);
    const interrupted = await interruptAfterFirstBatch(['elections', 'import', '--file', file, '--batch-size', '10', '--json'], { DATABASE_URL: database.url, PALANQUE_TEST_IMPORT_PAUSE_MS: '60000' });
    expect(interrupted.code, shown(interrupted)).toBe(130);
    // The first batch: 10 lines written, the rejected line 4 read before it.
    expect(JSON.parse(interrupted.stdout)).toMatchObject({ interrupted: true, rows: 11, rows_read: 11, inserted: 10, rejected: 1 });
  }, 90_000);

  /** Runs the CLI, sends SIGINT once the test hook says the first batch is committed, and waits for its end. */
  function interruptAfterFirstBatch(args: string[], env: Record<string, string>): Promise<CliResult> {
    return new Promise((resolve, reject) => {
      const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PALANQUE_') && name !== 'DATABASE_URL'));
      const child = spawn(process.execPath, [built.bin, ...args], { cwd: built.work, env: { ...clean, PALANQUE_CONFIG: join(built.work, 'config.json'), NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let signalled = false;
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (!signalled && stderr.includes('[test hook] batch committed')) {
          signalled = true;
          child.kill('SIGINT');
        }
      });
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }
});

describe('the import scripts run directly', () => {
  const script = (relative: string) => join(dirname(dirname(built.bin)), relative);

  it.each([
    ['npm run elections:import', 'src/elections/tse/import-cli.js', 'Usage: npm run elections:import -- --source'],
    ['npm run municipios:import', 'src/municipalities/import-cli.js', 'Usage: npm run municipios:import --'],
  ])('%s -- --help prints its usage and exits 0; an unknown option is a usage error without a stack', async (_name, relative, usage) => {
    const help = await runProcess(process.execPath, [script(relative), '--help'], built.work, { PATH: process.env.PATH });
    expect(help.code, shown(help)).toBe(0);
    expect(help.stdout).toContain(usage);
    expect(help.stderr).toBe('');
    const unknown = await runProcess(process.execPath, [script(relative), '--file', 'x.csv'], built.work, { PATH: process.env.PATH });
    expect(unknown.code, shown(unknown)).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--file'");
    expect(unknown.stderr).toContain(usage);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});
