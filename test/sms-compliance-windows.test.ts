/**
 * Issue 42, section 1, through the HTTP API: the propaganda window is a set of spans from the election
 * calendar with no voting day inside (Lei 9.504/1997 art. 39 §5º), the second round's span only for a
 * run-off candidate of an office that has one (CF arts. 28, 29 II, 77); the election that judges an
 * entity (candidacy, `disputa_eleitoral` as the court's election code, the office's next election); a
 * typed window must lie inside a legal span (422 `outside_legal_window`); and a send for an entity
 * whose election is over is refused under `enforce` (`election_over`), before anything is queued.
 * On SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loadCourtSample, linkEntity, CANDIDACIES, ELECTIONS } from './helpers/court-data.js';
import { expectError, request, type Result } from './helpers/http.js';
import { brasiliaDay } from '../src/brasilia-time.js';
import { courtReferenceOf } from '../src/elections/tse/reference.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ACCOUNT = `AC${'6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e'}`;
const AUTH_TOKEN = '1a2b3c4d5e6f708192a3b4c5d6e7f809';
const COMPLIANCE = '/api/sms/compliance/';
const SEND = '/api/sms/list_credentials/';
const ANA = '+5511987650001';

const provider = new SmsProviderSimulator();
let app: TestApp;
let admin: TestUser;
let owner: TestUser;

const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => request(app.baseUrl, method, path, owner.headers, body);
const windowOf = async (id: number) => {
  const answer = await call('GET', `${COMPLIANCE}?entity_id=${id}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.effective_window as Json | null;
};
const setSettings = (id: number, body: unknown) => call('PUT', `${COMPLIANCE}?entity_id=${id}`, body);
const daysOf = (window: Json) => (day: string) => window.spans.some((span: Json) => day >= span.starts_on && day <= span.ends_on);

function rulesRefused(answer: Result): string[] {
  expectError(answer, 422, 'validation_failed');
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`);
}

async function entity(fields: Json): Promise<number> {
  return app.entities.store.create('candidato', owner.user.id, { nome: 'Candidata de Teste', ...fields });
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  await loadCourtSample(app.sequelize);
  courtReferenceOf(app.sequelize).invalidate();
  admin = await createAdmin(app);
  owner = await createUser(app);
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('the effective window as spans', () => {
  it('leaves both voting days out for a second-round candidate (the issue: 2024-08-16..2024-10-26 held 6 October)', async () => {
    const id = await entity({});
    await linkEntity(app.sequelize, id, CANDIDACIES.maria);
    const window = (await windowOf(id))!;
    expect(window).toMatchObject({ starts_on: '2024-08-16', ends_on: '2024-10-26', source: 'election', election: { nr_turno: 2, dt_eleicao: '2024-10-27' } });
    const open = daysOf(window);
    expect(['2024-08-16', '2024-10-05', '2024-10-07', '2024-10-26'].map(open)).toEqual([true, true, true, true]);
    expect(['2024-08-15', '2024-10-06', '2024-10-27'].map(open)).toEqual([false, false, false]);
  });

  it('has no second-round span for an office without one, even with ballot segundo_turno', async () => {
    const councillor = await entity({ position: 'Vereadora', ballot: 'segundo_turno', disputa_eleitoral: ELECTIONS.municipal2024 });
    expect((await windowOf(councillor))!.spans).toEqual([{ starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 }]);
    const mayor = await entity({ position: 'Prefeita', ballot: 'segundo_turno', disputa_eleitoral: ELECTIONS.municipal2024 });
    expect((await windowOf(mayor))!.spans).toEqual([
      { starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 },
      { starts_on: '2024-10-07', ends_on: '2024-10-26', round: 2 },
    ]);
  });

  it('takes disputa_eleitoral as the court election code, not a year; else the next election of the office scope', async () => {
    const byCode = await entity({ position: 'Governador', disputa_eleitoral: ELECTIONS.municipal2024 });
    // The code names a municipal election; the calendar line is the 2024 one (the office does not override it).
    expect(await windowOf(byCode)).toMatchObject({ starts_on: '2024-08-16', election: { ano: 2024, cd_eleicao: ELECTIONS.municipal2024 } });
    const byYear = await entity({ position: 'Prefeito', disputa_eleitoral: 2024 });
    const next = (await windowOf(byYear))!;
    const today = brasiliaDay();
    // 2024 is no court code: the next municipal election from today.
    expect(next.election.ano).toBe(today <= '2024-10-27' ? 2024 : 2028);
  });
});

describe('a typed window', () => {
  it('must lie inside a legal span: 2026-01-01..2026-12-31 is 422 outside_legal_window naming the spans', async () => {
    const id = await entity({ position: 'Governadora' });
    const refused = await setSettings(id, { mode: 'enforce', window: { starts_on: '2026-01-01', ends_on: '2026-12-31' } });
    expect(rulesRefused(refused)).toEqual(['window:outside_legal_window']);
    expect(refused.body.error.details[0]).toMatchObject({ value: '2026-01-01..2026-12-31' });
    // Over the first voting day (4 October 2026): refused too.
    expect(rulesRefused(await setSettings(id, { mode: 'enforce', window: { starts_on: '2026-09-01', ends_on: '2026-10-04' } }))).toEqual(['window:outside_legal_window']);
    const accepted = await setSettings(id, { mode: 'enforce', window: { starts_on: '2026-09-01', ends_on: '2026-10-03' } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.data.effective_window).toMatchObject({ source: 'typed', spans: [{ starts_on: '2026-09-01', ends_on: '2026-10-03', round: 1 }] });
  });

  it('of an entity with no election is judged against every calendar election', async () => {
    const id = await entity({});
    expect(rulesRefused(await setSettings(id, { mode: 'enforce', window: { starts_on: '2026-01-01', ends_on: '2026-12-31' } }))).toEqual(['window:outside_legal_window']);
    const accepted = await setSettings(id, { mode: 'enforce', window: { starts_on: '2028-08-16', ends_on: '2028-09-30' } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.data.effective_window).toMatchObject({ calendar_election_id: null, election: null, spans: [{ starts_on: '2028-08-16', ends_on: '2028-09-30' }] });
  });
});

describe('election_over', () => {
  it('refuses under enforce a send for an entity whose election is over, before anything is queued', async () => {
    const id = await entity({});
    await linkEntity(app.sequelize, id, CANDIDACIES.joaoDavila);
    const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'João', account_id: ACCOUNT, sender_id: '11940028944', secret: AUTH_TOKEN, entity_id: id, footer: 'João 50123. Responda SAIR para sair' });
    expect(added.status, added.text).toBe(201);
    await app.sms.models.Contact.create({ entity_id: id, phone: ANA, name: null, consent_source: 'evento', consent_given_at: new Date(), consent_text: null, created_by: owner.user.id, created_at: new Date(), updated_at: new Date() });
    const body = { titulo: 'Obrigado', credencial: added.body.data.id, mensagem: { mensagem: 'Obrigado pelos votos.', recipient_list_str: ANA } };
    const before = await app.sms.models.Campaign.count();
    const refused = await call('POST', SEND, body);
    expect(rulesRefused(refused)).toContain('credencial:election_over');
    expect(refused.body.error.details.find((detail: Json) => detail.rule === 'election_over')).toMatchObject({ value: '2024-10-06', message: expect.stringContaining(`candidacy ${CANDIDACIES.joaoDavila}`) });
    // Declared non-electoral (art. 36-A): the window does not judge it, the election being over still does.
    const declared = await call('POST', SEND, { ...body, declaracao_nao_eleitoral: 'Agradecimento, sem pedido de voto.' });
    expect(rulesRefused(declared)).toEqual(['credencial:election_over']);
    expect(await app.sms.models.Campaign.count()).toBe(before);
  });
});
