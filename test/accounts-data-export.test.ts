/**
 * exportMyData (issue 21, LGPD access): a user downloads what the service holds about them, from every
 * table that names users, and no secret; another user's records stay out; and every column of the
 * schema that references a user is a section of the export, so a table added later cannot be forgotten.
 * On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest';
import { EXPORT_SECTIONS } from '../src/accounts/data-export.js';
import { createUser } from './helpers/accounts.js';
import { appsClosedAfterEach } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { joinTeam } from './helpers/teams.js';

const start = appsClosedAfterEach();

describe('exportMyData', () => {
  it("holds the caller's account, sessions, teams, records and failed logins, and no secret", async () => {
    const app = await start();
    const carlos = await createUser(app, { username: 'carlos.pereira', email: 'carlos.pereira@palanque.app', first_name: 'Carlos' });
    const owner = await createUser(app);
    const post = (headers: Record<string, string>, path: string, body: unknown) => request(app.baseUrl, 'POST', path, headers, body);

    // A login from a phone, a failed one, a team, an entity of his own, a bookmark and a news source.
    const phone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)';
    const loggedIn = await request(app.baseUrl, 'POST', '/api/auth/login', { 'User-Agent': phone }, { username: 'carlos.pereira', password: carlos.password });
    expect(loggedIn.status).toBe(200);
    expectError(await post({}, '/api/auth/login', { username: 'Carlos.Pereira', password: 'not his password at all' }), 401, 'invalid_credentials');
    const team = await post(owner.headers, '/api/entidade/add/?tp=candidato', { nome: 'Maria da Silva Santos' });
    await joinTeam(app.baseUrl, owner, carlos, team.body.data.id, 'operator');
    const own = await post(carlos.headers, '/api/entidade/add/?tp=concorrente', { nome: 'João Pereira' });
    expect(own.status).toBe(201);
    expect((await post(carlos.headers, '/api/research/add_research_bookmark/', { title: 'Pesquisa Datafolha', url: 'https://pesquisa.exemplo.com.br/sp' })).status).toBe(201);
    expect((await post(owner.headers, '/api/research/add_research_bookmark/', { title: 'Não é do Carlos', url: 'https://outra.exemplo.com.br/' })).status).toBe(201);
    expect((await post(carlos.headers, '/api/news/request_font/', { name: 'Diário do Povo', url: 'https://diario.exemplo.com.br/' })).status).toBe(201);

    const exported = await request(app.baseUrl, 'GET', '/api/auth/my_data/', carlos.headers);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="palanque-data-carlos\.pereira-\d{4}-\d{2}-\d{2}\.json"$/);
    const { account, sections } = exported.body.data;
    expect(account).toMatchObject({ id: carlos.user.id, username: 'carlos.pereira', email: 'carlos.pereira@palanque.app', first_name: 'Carlos' });
    expect(Object.keys(sections).sort()).toEqual(Object.keys(EXPORT_SECTIONS).sort());
    expect(sections.sessions.source).toBe('api_tokens.user_id');
    expect(sections.sessions.rows.map((row: { device: string | null }) => row.device)).toContain(phone);
    expect(sections.memberships.rows).toEqual(
      expect.arrayContaining([expect.objectContaining({ entity_id: team.body.data.id, entity_name: 'Maria da Silva Santos', role: 'operator' })]),
    );
    expect(sections.entities_owned.rows).toEqual([expect.objectContaining({ id: own.body.data.id, nome: 'João Pereira', tp: 'concorrente' })]);
    expect(sections.research_bookmarks.rows).toEqual([expect.objectContaining({ title: 'Pesquisa Datafolha', url: 'https://pesquisa.exemplo.com.br/sp' })]);
    expect(sections.news_sources_requested.rows).toEqual([expect.objectContaining({ name: 'Diário do Povo' })]);
    // The failed check of his username, as typed in another case, from this client's address.
    expect(sections.failed_logins.rows).toEqual([{ failed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/), from_address: expect.stringMatching(/127\.0\.0\.1/) }]);
    expect(sections.security_events.rows.map((row: { event: string }) => row.event)).toEqual(['login_succeeded', 'login_failed', 'invitation_accepted', 'team_member_added']);
    expect(sections.security_events.rows[0].details).toEqual({});
    expect(sections.sessions.rows[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    // No secret, in any form.
    const stored = (await app.accounts.users.byId(carlos.user.id))!;
    const key = loggedIn.body.data.token as string;
    for (const secret of [stored.password_hash, carlos.password, key, carlos.key]) expect(exported.text).not.toContain(secret);
    expect(exported.text).not.toMatch(/hash|sealed|secret|"subject"/);
    expect(exported.text).not.toContain('Não é do Carlos');
  });

  it('answers 401 without a key', async () => {
    const app = await start();
    expectError(await request(app.baseUrl, 'GET', '/api/auth/my_data/', {}), 401, 'unauthorized');
  });

  it('covers every column of the schema that references a user', async () => {
    const app = await start();
    const queries = app.sequelize.getQueryInterface();
    const tables = (await queries.showAllTables()).map((table) => (typeof table === 'string' ? table : (table as { tableName: string }).tableName));
    const referencing: string[] = [];
    for (const table of tables) {
      const references = (await queries.getForeignKeyReferencesForTable(table)) as unknown as Array<{ columnName: string; referencedTableName: string }>;
      for (const reference of references) if (reference.referencedTableName === 'users') referencing.push(`${table}.${reference.columnName}`);
    }
    const covered = new Set(Object.values(EXPORT_SECTIONS).flatMap((section) => section.table.split(', ')));
    expect(referencing.length).toBeGreaterThan(15);
    expect(referencing.filter((column) => !covered.has(column)).sort()).toEqual([]);
  });
});
