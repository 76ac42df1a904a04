/**
 * The admin CLI's database tasks, as an admin runs them on a database of their own (test/helpers/cli.ts
 * builds the binary): db migrate, municipios import (a file, a missing one, an unreachable download),
 * db seed, user create --admin and user set-password, then logging in with that user on a second server
 * and a second profile; a database URL the CLI cannot use. Unlike test/cli.test.ts, this runs on
 * PostgreSQL too (TEST_DATABASE_URL): these commands write the database themselves.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_MUNICIPIOS, startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, shown, type BuiltCli, type CliRunOptions } from './helpers/cli.js';
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
    const status = await cli(['status', '-p', 'admin-db', '--json']);
    expect(status.code, shown(status)).toBe(0);
    const profiles = JSON.parse((await cli(['profile', 'list', '--json'])).stdout);
    expect(profiles.profiles).toContainEqual(expect.objectContaining({ name: 'admin-db', current: true, base_url: second.baseUrl, logged_in: true, username: 'cli.admin' }));
    expect(JSON.stringify(profiles)).not.toMatch(/plq_/);
  }, 60_000);

  it('reports a database it cannot use (exit 1)', async () => {
    const result = await cli(['db', 'migrate', '--database-url', 'mysql://nowhere/db']);
    expect(result.code, shown(result)).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
  });
});
