/**
 * Issue 21: the edit history of an entity. Every change to an entity, its monitors and its SMS
 * credentials is recorded (who, when, which fields before and after), listed newest first, 50 per page,
 * to the entity's owner, its admins and platform admins; operators get 403 and strangers 404. A
 * credential's secret never reaches it, and rows older than the retention are purged.
 * Through the real app with response validation on; on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const DAY = 24 * 3600_000;

let app: TestApp;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let platformAdmin: TestUser;

const save = (body: Json, user: TestUser) => request(app.baseUrl, 'POST', '/api/entidade/add/', user.headers, body);
const historyOf = (id: number, user: TestUser, query = '') => request(app.baseUrl, 'GET', `/api/entidade/history/?id=${id}${query}`, user.headers);

/** A new entity of `owner`'s, with an admin, an operator and a viewer in its team. */
async function teamEntity(body: Json): Promise<number> {
  const created = await save(body, owner);
  expect(created.status, created.text).toBe(201);
  const id = created.body.data.id as number;
  const members: Array<[TestUser, 'admin' | 'operator' | 'viewer']> = [[teamAdmin, 'admin'], [operator, 'operator'], [viewer, 'viewer']];
  for (const [user, role] of members) await app.entities.models.Member.create({ entity_id: id, user_id: user.user.id, role, added_at: new Date() });
  return id;
}

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  owner = await createUser(app, { first_name: 'Carla', last_name: 'Dona' });
  teamAdmin = await createUser(app, { first_name: 'Ana', last_name: 'Administradora' });
  operator = await createUser(app, { first_name: 'Otávio', last_name: 'Operador' });
  viewer = await createUser(app, { first_name: 'Vera', last_name: 'Leitora' });
  stranger = await createUser(app, { first_name: 'Sérgio', last_name: 'Estranho' });
  platformAdmin = await createAdmin(app, { first_name: 'Paula', last_name: 'Plataforma' });
});
afterAll(async () => {
  await app?.close();
});

describe('GET /api/entidade/history/ (listEntityHistory)', () => {
  it('shows who changed which fields, when, before and after; an unchanged field is not listed', async () => {
    const cpf = formatCpf(generateCpf());
    const id = await teamEntity({ nome: 'Maria da Silva Santos', nm_urna: 'Maria Santos', cpf, genero: 'feminino' });
    const newCpf = formatCpf(generateCpf());
    const startedAt = Date.now();
    // `nome` and `genero` are sent unchanged; `nm_urna` and `cpf` change; `marketshare` gains an entry.
    const edited = await save({ id, nome: 'Maria da Silva Santos', genero: 'feminino', nm_urna: 'Maria da Saúde', cpf: newCpf, marketshare: [{ marketshare: '12%' }] }, teamAdmin);
    expect(edited.status, edited.text).toBe(200);

    const listed = await historyOf(id, owner);
    expect(listed.status, listed.text).toBe(200);
    const [update, creation] = listed.body.data.results as Json[];
    expect(listed.body.data.count).toBe(2);
    expect(update).toMatchObject({ subject: 'entity', subject_id: null, action: 'updated', actor: { id: teamAdmin.user.id, display_name: 'Ana Administradora' } });
    expect(new Date(update.occurred_at).getTime()).toBeGreaterThanOrEqual(startedAt - 1000);
    const byField = Object.fromEntries((update.changes as Json[]).map((change) => [change.field, change]));
    expect(Object.keys(byField).sort()).toEqual(['cpf', 'marketshare', 'nm_urna']);
    expect(byField.nm_urna).toEqual({ field: 'nm_urna', before: 'Maria Santos', after: 'Maria da Saúde' });
    expect(byField.cpf).toEqual({ field: 'cpf', before: cpf, after: newCpf });
    expect(byField.marketshare.before).toBeNull();
    expect(byField.marketshare.after).toEqual([expect.objectContaining({ marketshare: '12%' })]);

    expect(creation).toMatchObject({ action: 'created', actor: { id: owner.user.id, display_name: 'Carla Dona' } });
    expect(creation.changes).toEqual(
      expect.arrayContaining([
        { field: 'nome', before: null, after: 'Maria da Silva Santos' },
        { field: 'cpf', before: null, after: cpf },
      ]),
    );
    // A field the creation did not set is not listed.
    expect((creation.changes as Json[]).map((change) => change.field)).not.toContain('raca');
  });

  it('records nothing for an update that changes nothing', async () => {
    const id = await teamEntity({ nome: 'Sem Mudança' });
    expect((await save({ id, nome: 'Sem Mudança' }, owner)).status).toBe(200);
    const listed = await historyOf(id, owner);
    expect(listed.body.data.results.map((row: Json) => row.action)).toEqual(['created']);
  });

  it('lets the owner, team admins and platform admins read it; operators and viewers get 403, strangers 404', async () => {
    const id = await teamEntity({ nome: 'Entidade Protegida' });
    for (const reader of [owner, teamAdmin, platformAdmin]) expect((await historyOf(id, reader)).status).toBe(200);
    expectError(await historyOf(id, operator), 403, 'forbidden');
    expectError(await historyOf(id, viewer), 403, 'forbidden');
    const hidden = await historyOf(id, stranger);
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details[0]).toMatchObject({ location: 'query', field: 'id', rule: 'in_your_teams' });
    expectError(await request(app.baseUrl, 'GET', '/api/entidade/history/', owner.headers), 400, 'bad_request');
    expectError(await request(app.baseUrl, 'GET', `/api/entidade/history/?id=${id}`, {}), 401, 'unauthorized');
    expectError(await historyOf(id, owner, '&subject=everything'), 400, 'bad_request');
  });

  it('pages 50 at a time, the newest first, with links that keep the filter', async () => {
    const id = await teamEntity({ nome: 'Entidade Editada', nm_urna: 'Versão 0' });
    for (let version = 1; version <= 55; version += 1) expect((await save({ id, nome: 'Entidade Editada', nm_urna: `Versão ${version}` }, owner)).status).toBe(200);

    const first = await historyOf(id, owner, '&subject=entity');
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ count: 56, total_pages: 2 });
    expect(first.body.data.results).toHaveLength(50);
    expect(first.body.data.results[0].changes).toEqual([{ field: 'nm_urna', before: 'Versão 54', after: 'Versão 55' }]);
    const next = new URL(first.body.data.links.next);
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('subject')).toBe('entity');
    expect(next.searchParams.get('id')).toBe(String(id));
    const ids = (first.body.data.results as Json[]).map((row) => row.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const second = await historyOf(id, owner, '&page=2');
    expect(second.body.data.results).toHaveLength(6);
    expect(second.body.data.results.at(-1).action).toBe('created');
    expectError(await historyOf(id, owner, '&page=3'), 404, 'not_found');
  });

  it('records a monitor and an SMS credential, never the credential secret', async () => {
    const id = await teamEntity({ nome: 'Entidade com Monitor' });
    const monitor = await request(app.baseUrl, 'POST', '/api/monitor_social/add_monitor/', operator.headers, { entity_id: id, name: 'Redes', keywords: ['eleição'] });
    expect(monitor.status, monitor.text).toBe(201);
    const secret = 'a-secret-auth-token-0123456789';
    const credential = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', platformAdmin.headers, {
      name: 'Equipe Carla',
      account_id: `AC${'0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e'}`,
      sender_id: '(11) 94002-7777',
      secret,
      entity_id: id,
    });
    expect(credential.status, credential.text).toBe(201);

    const listed = await historyOf(id, owner);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.text).not.toContain(secret);
    const [sms, social] = listed.body.data.results as Json[];
    expect(sms).toMatchObject({ subject: 'sms_credential', subject_id: credential.body.data.id, action: 'created', actor: { id: platformAdmin.user.id } });
    expect(sms.changes).toContainEqual({ field: 'secret', before: null, after: '[secret]' });
    expect(social).toMatchObject({ subject: 'monitor', subject_id: monitor.body.data.id, action: 'created', actor: { id: operator.user.id, display_name: 'Otávio Operador' } });
    expect(social.changes).toContainEqual({ field: 'name', before: null, after: 'Redes' });
    const onlyMonitors = await historyOf(id, owner, '&subject=monitor');
    expect(onlyMonitors.body.data.results.map((row: Json) => row.subject)).toEqual(['monitor']);
    // Nothing secret in the table either.
    const [stored] = await app.sequelize.query<Json>('SELECT COUNT(*) AS n FROM edit_history WHERE changes LIKE :secret', { replacements: { secret: `%${secret}%` }, type: QueryTypes.SELECT });
    expect(Number(stored.n)).toBe(0);
  });

  it('masks personal data for a reader without the whole view, with the masks of issue 12', async () => {
    const { EditHistory } = await import('../src/entities/history.js');
    const id = await teamEntity({ nome: 'Pessoa Mascarada' });
    const cpf = '529.982.247-25';
    await app.entities.history.record({ entityId: id, subject: 'entity', action: 'updated', actorId: owner.user.id, changes: [
      { field: 'cpf', before: null, after: cpf },
      { field: 'raca', before: null, after: 3 },
      { field: 'endBase', before: 'Rua A, 1', after: 'Av. Paulista, 1000' },
      { field: 'cepBase', before: null, after: '01310-100' },
    ] });
    expect(app.entities.history).toBeInstanceOf(EditHistory);
    const masked = await app.entities.history.page(id, { subject: 'entity' }, 1, 50, false);
    expect(masked.rows[0]!.changes).toEqual([
      { field: 'cpf', before: null, after: '***.982.247-**' },
      { field: 'raca', before: null, after: null },
      { field: 'endBase', before: null, after: null },
      { field: 'cepBase', before: null, after: '01310-***' },
    ]);
    const whole = await app.entities.history.page(id, { subject: 'entity' }, 1, 50, true);
    expect(whole.rows[0]!.changes[0]).toEqual({ field: 'cpf', before: null, after: cpf });
  });

  it('names the actor through their account as it is now, and keeps rows whose account is gone', async () => {
    const author = await createUser(app, { first_name: 'Nome', last_name: 'Antigo' });
    const id = await teamEntity({ nome: 'Entidade Renomeada' });
    await app.entities.models.Member.create({ entity_id: id, user_id: author.user.id, role: 'operator', added_at: new Date() });
    expect((await save({ id, nome: 'Entidade Renomeada', nm_urna: 'Nova' }, author)).status).toBe(200);
    await app.accounts.models.User.update({ first_name: 'Nome', last_name: 'Novo' }, { where: { id: author.user.id } });
    const listed = await historyOf(id, owner);
    expect(listed.body.data.results[0].actor).toEqual({ id: author.user.id, display_name: 'Nome Novo' });
    const stored = await app.sequelize.query<Json>('SELECT changes FROM edit_history WHERE entity_id = :id', { replacements: { id }, type: QueryTypes.SELECT });
    expect(JSON.stringify(stored)).not.toContain('Antigo');
  });
});

describe('retention', () => {
  it('purges rows older than HISTORY_RETENTION_DAYS (five years by default) and keeps the rest', async () => {
    const id = await teamEntity({ nome: 'Entidade Antiga' });
    const history = app.entities.history;
    const before = (await historyOf(id, owner)).body.data.count as number;
    expect(before).toBe(1);
    // Just inside five years: kept. Just past: purged.
    expect(await history.purgeExpired(new Date(Date.now() + 5 * 365 * DAY - DAY))).toBe(0);
    expect((await historyOf(id, owner)).body.data.count).toBe(1);
    expect(await history.purgeExpired(new Date(Date.now() + 5 * 365 * DAY + DAY))).toBeGreaterThanOrEqual(1);
    expect((await historyOf(id, owner)).body.data.count).toBe(0);
  });
});
