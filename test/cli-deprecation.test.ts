/**
 * The built CLI against a test server, on deprecation as a protocol (issue 45 §2): a command whose call
 * uses something deprecated (here `idade` in addEntity's body) says so once on stderr, with the date and
 * where to read more, while stdout keeps the answer alone; a command that uses nothing deprecated writes
 * nothing on stderr. The notice itself (once per command, the Sunset and the successor) is in
 * test/deprecation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, shown, type BuiltCli } from './helpers/cli.js';

let built: BuiltCli;
let app: TestApp;
let owner: TestUser;

const cli = (args: string[]) => built.run(args, { env: { PALANQUE_BASE_URL: app.baseUrl, PALANQUE_TOKEN: owner.key } });

beforeAll(async () => {
  [built, app] = await Promise.all([buildCli(), startTestApp()]);
  owner = await createUser(app);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await built?.remove();
});

describe('palanque and deprecated fields', () => {
  it('warns once on stderr when a command sends a deprecated field, and says nothing otherwise', async () => {
    const born = new Date(Date.UTC(new Date().getUTCFullYear() - 40, 0, 1)).toISOString().slice(0, 10);
    const withAge = await cli(['entities', 'add', '--tp', 'candidato', '--data', JSON.stringify({ nome: 'Com Idade', data_nascimento: born, idade: 40 }), '--json']);
    expect(withAge.code, shown(withAge)).toBe(0);
    expect(JSON.parse(withAge.stdout)).toMatchObject({ nome: 'Com Idade', idade: 40 });
    expect(withAge.stderr).toBe(
      `Warning: POST /api/entidade/add/ uses what the API deprecated on 2026-11-29. See ${app.baseUrl}/docs#/entidades/addEntity\n`,
    );

    const withoutAge = await cli(['entities', 'add', '--tp', 'candidato', '--data', JSON.stringify({ nome: 'Sem Idade', data_nascimento: born }), '--json']);
    expect(withoutAge.code, shown(withoutAge)).toBe(0);
    expect(withoutAge.stderr).toBe('');
  });
});
