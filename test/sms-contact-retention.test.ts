/**
 * Contacts erased after the entity's election (issue 42, section 5; src/messaging/contact-retention.ts),
 * with the certification day from a stub of the election calendar (injected as the calendar will be):
 * - the owner and admins are notified 30 days before the day (once, however often the sweep runs);
 *   operators are not; an entity linked to no election is never erased;
 * - on the day the contacts go (their messages masked, as eraseContact does), the opt-outs and the
 *   suppression list stay, the audit log records it; contacts added later stay;
 * - a notice sent late moves the erasure to 30 days after it;
 * - a platform admin holds the erasure while proceedings are pending (CF art. 14 §10) and releases it,
 *   both audited; the owner may not; the status operation says all of it.
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calendarCertificationLookup, ContactRetention, type CertificationLookup, type RetentionElection } from '../src/messaging/contact-retention.js';
import { Contacts } from '../src/messaging/contacts.js';
import { defineNotificationModels } from '../src/notifications/models.js';
import { Notifications } from '../src/notifications/notifications.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ELECTIONS, loadCourtSample } from './helpers/court-data.js';
import { request, type Result } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const MUNICIPAL_2024: RetentionElection = { id: 1, title: 'Eleições Municipais 2024', certification_on: '2024-12-19' };
const EARLY: RetentionElection = { id: 9, title: 'Eleição Suplementar 2024', certification_on: '2024-01-10' };
/** The stub calendar: entities name their election by `disputa_eleitoral`. */
const STUB_ELECTIONS = new Map<number, RetentionElection>([
  [1, MUNICIPAL_2024],
  [9, EARLY],
]);
const lookup: CertificationLookup = async (entity) => (entity.disputa_eleitoral === null ? undefined : STUB_ELECTIONS.get(entity.disputa_eleitoral));

let app: TestApp;
let admin: TestUser;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let retention: ContactRetention;
let sequence = 0;

/** Noon in Brasília of a day. */
const at = (day: string) => new Date(`${day}T12:00:00-03:00`);

async function newEntity(disputa: number | null): Promise<number> {
  const id = await app.entities.store.create('candidato', owner.user.id, { nome: `Entidade ${disputa}`, ...(disputa === null ? {} : { disputa_eleitoral: disputa }) } as Json);
  for (const [member, role] of [[teamAdmin, 'admin'], [operator, 'operator']] as const) {
    await app.entities.models.Member.create({ entity_id: id, user_id: member.user.id, role, added_at: new Date() });
  }
  return id;
}

async function addContacts(entityId: number, count: number): Promise<string[]> {
  const phones: string[] = [];
  for (let i = 0; i < count; i += 1) {
    sequence += 1;
    const phone = `+55219985${String(sequence).padStart(5, '0')}`;
    const added = await request(app.baseUrl, 'POST', '/api/contacts/', owner.headers, { entity_id: entityId, phone, consent: { source: 'Comício', given_at: '2024-08-20T12:00:00Z' } });
    expect(added.status, added.text).toBe(201);
    phones.push(phone);
  }
  return phones;
}

const contactCount = async (entityId: number) =>
  Number((await app.sequelize.query<{ total: number }>('SELECT COUNT(*) AS total FROM contacts WHERE entity_id = ?', { replacements: [entityId], type: QueryTypes.SELECT }))[0]!.total);

async function noticesOf(user: TestUser, entityId: number): Promise<Json[]> {
  const listed = await request(app.baseUrl, 'GET', '/api/notifications/', user.headers);
  expect(listed.status, listed.text).toBe(200);
  return (listed.body.data.results as Json[]).filter((notice) => notice.type === 'contacts_retention_notice' && notice.entity_id === entityId);
}

async function auditEvents(event: string): Promise<Json[]> {
  const listed = await request(app.baseUrl, 'GET', `/api/auth/audit_events/?event=${event}`, admin.headers);
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.results;
}

const status = (caller: TestUser, entityId: number): Promise<Result> => request(app.baseUrl, 'GET', `/api/contact_retention/?entity_id=${entityId}`, caller.headers);

beforeAll(async () => {
  app = await startTestApp({ certificationLookup: lookup });
  admin = await createAdmin(app);
  owner = await createUser(app);
  teamAdmin = await createUser(app);
  operator = await createUser(app);
  retention = new ContactRetention({
    sequelize: app.sequelize,
    models: app.sms.models,
    contacts: new Contacts(app.sms.models, app.sms.optOuts),
    notifications: new Notifications(defineNotificationModels(app.sequelize), pino({ level: 'silent' })),
    audit: app.accounts.audit,
    lookup,
    retentionDays: 180,
    logger: pino({ level: 'silent' }),
  });
});

afterAll(async () => {
  await app?.close();
});

describe('the erasure after the certification', () => {
  it('notifies the owner and admins 30 days before, once; erases on the day; keeps the opt-outs; audits it', async () => {
    const entity = await newEntity(1);
    const phones = await addContacts(entity, 3);
    // The first number opted out: the erasure must keep it out of the entity's campaigns (its suppression, migration 0034).
    await app.sms.optOuts.record([entity], phones[0]!, { source: 'reply', keyword: 'SAIR' });
    expect(await app.sms.optOuts.has(entity, phones[0]!)).toBe(true);

    // 2024-12-19 + 180 days = 2025-06-17; the notice is due 30 days before, on 2025-05-18.
    const before = await status(owner, entity);
    expect(before.status, before.text).toBe(200);
    expect(before.body.data).toEqual({
      entity_id: entity,
      retention_days: 180,
      election: MUNICIPAL_2024,
      notice_on: '2025-05-18',
      erase_on: '2025-06-17',
      noticed_at: null,
      erased_at: null,
      erased_count: null,
      hold: null,
    });
    expect((await status(operator, entity)).status).toBe(403);

    await retention.sweep(at('2025-05-17'));
    expect(await noticesOf(owner, entity)).toHaveLength(0);
    await retention.sweep(at('2025-05-18'));
    await retention.sweep(at('2025-05-19'));
    const [notice] = await noticesOf(owner, entity);
    expect(notice).toMatchObject({ title: expect.stringContaining('17/06/2025'), body: expect.stringContaining('19/12/2024'), subject: { kind: 'entity', id: entity } });
    expect(await noticesOf(owner, entity)).toHaveLength(1);
    expect(await noticesOf(teamAdmin, entity)).toHaveLength(1);
    expect(await noticesOf(operator, entity)).toHaveLength(0);
    expect((await status(owner, entity)).body.data.noticed_at).toBe(at('2025-05-18').toISOString());

    await retention.sweep(at('2025-06-16'));
    expect(await contactCount(entity)).toBe(3);
    await retention.sweep(at('2025-06-17'));
    expect(await contactCount(entity)).toBe(0);
    expect(await app.sms.optOuts.has(entity, phones[0]!)).toBe(true);
    expect(await app.sms.optOuts.has(entity, phones[1]!)).toBe(false);
    const after = (await status(owner, entity)).body.data;
    expect(after).toMatchObject({ erased_at: at('2025-06-17').toISOString(), erased_count: 3 });
    const [audited] = (await auditEvents('contacts_retention_erased')).filter((event) => event.details.entity_id === entity);
    expect(audited).toMatchObject({ actor_id: null, details: { entity_id: entity, election_id: 1, certification_on: '2024-12-19', erased: 3, left_in_flight: 0 } });
    expect(JSON.stringify(audited)).not.toContain(phones[1]!.slice(3));

    // Contacts added after the erasure stay: the day is done.
    await addContacts(entity, 1);
    await retention.sweep(at('2025-06-20'));
    expect(await contactCount(entity)).toBe(1);
  });

  it('a late notice moves the erasure to 30 days after it', async () => {
    // 2024-01-10 + 180 = 2024-07-08, long past when the first sweep runs.
    const entity = await newEntity(9);
    await addContacts(entity, 2);
    await retention.sweep(at('2025-05-01'));
    expect(await noticesOf(owner, entity)).toHaveLength(1);
    expect(await contactCount(entity)).toBe(2);
    expect((await status(owner, entity)).body.data).toMatchObject({ notice_on: '2024-06-08', erase_on: '2025-05-31' });
    await retention.sweep(at('2025-05-30'));
    expect(await contactCount(entity)).toBe(2);
    await retention.sweep(at('2025-05-31'));
    expect(await contactCount(entity)).toBe(0);
  });

  it('an entity linked to no election keeps its contacts', async () => {
    const entity = await newEntity(null);
    await addContacts(entity, 1);
    await retention.sweep(at('2030-01-01'));
    expect(await contactCount(entity)).toBe(1);
    expect((await status(owner, entity)).body.data).toMatchObject({ election: null, notice_on: null, erase_on: null });
  });
});

describe('the hold while proceedings are pending', () => {
  it('a platform admin holds and releases it, audited; the owner may not; released, the next sweep erases', async () => {
    const entity = await newEntity(1);
    await addContacts(entity, 2);
    const path = `/api/contact_retention/hold/?entity_id=${entity}`;
    const reason = 'AIME nº 0600123-45.2024.6.21.0001';
    expect((await request(app.baseUrl, 'PUT', path, owner.headers, { reason })).status).toBe(403);
    const blank = await request(app.baseUrl, 'PUT', path, admin.headers, { reason: '  ' });
    expect(blank.status).toBe(422);
    expect(blank.body.error.details[0]).toMatchObject({ field: 'reason', rule: 'not_blank' });
    const held = await request(app.baseUrl, 'PUT', path, admin.headers, { reason });
    expect(held.status, held.text).toBe(200);
    expect(held.body.data.hold).toMatchObject({ held_by: admin.user.id, reason });
    expect((await status(owner, entity)).body.data.hold).toMatchObject({ reason });

    await retention.sweep(at('2025-05-18'));
    expect(await noticesOf(owner, entity)).toHaveLength(1);
    await retention.sweep(at('2025-07-01'));
    expect(await contactCount(entity)).toBe(2);

    expect((await request(app.baseUrl, 'DELETE', path, owner.headers)).status).toBe(403);
    const released = await request(app.baseUrl, 'DELETE', path, admin.headers);
    expect(released.status, released.text).toBe(200);
    expect(released.body.data.hold).toBeNull();
    const again = await request(app.baseUrl, 'DELETE', path, admin.headers);
    expect(again.status).toBe(404);
    expect(again.body.error.details[0]).toMatchObject({ field: 'entity_id', rule: 'held' });

    await retention.sweep(at('2025-07-01'));
    expect(await contactCount(entity)).toBe(0);
    expect((await auditEvents('contact_retention_held')).filter((event) => event.details.entity_id === entity)).toEqual([
      expect.objectContaining({ actor_id: admin.user.id, details: { entity_id: entity, reason } }),
    ]);
    expect((await auditEvents('contact_retention_released')).filter((event) => event.details.entity_id === entity)).toHaveLength(1);
  });
});

describe('the election calendar gives the certification day', () => {
  it("an entity whose disputa_eleitoral is the 2024 municipal election is erased 180 days after 19 December 2024; one linked to nothing never", async () => {
    await loadCourtSample(app.sequelize);
    const real = calendarCertificationLookup(app.sequelize);
    expect(await real({ id: 1, candidacy_id: null, disputa_eleitoral: ELECTIONS.municipal2024 }, '2025-01-10')).toMatchObject({ title: 'Eleições Municipais 2024', certification_on: '2024-12-19' });
    expect(await real({ id: 1, candidacy_id: null, disputa_eleitoral: null }, '2025-01-10')).toBeUndefined();
    const entity = await newEntity(ELECTIONS.municipal2024);
    const withCalendar = new ContactRetention({
      sequelize: app.sequelize,
      models: app.sms.models,
      contacts: new Contacts(app.sms.models, app.sms.optOuts),
      notifications: new Notifications(defineNotificationModels(app.sequelize), pino({ level: 'silent' })),
      audit: app.accounts.audit,
      lookup: real,
      retentionDays: 180,
      logger: pino({ level: 'silent' }),
    });
    expect(await withCalendar.status(entity, '2025-01-10')).toMatchObject({ election: { certification_on: '2024-12-19' }, notice_on: '2025-05-18', erase_on: '2025-06-17' });
  });
});
