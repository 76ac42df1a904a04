/**
 * The election calendar (issue 42, section 1; src/elections/calendar.ts, packages/rules/src/election-calendar.ts): the
 * seeded lines and their sources, the election that judges an entity (candidacy, then
 * `disputa_eleitoral` as a court election code, then the next election of its office's scope), the
 * run-off, the propaganda spans (no voting day inside) and the inauguration days by office. On SQLite,
 * or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { loadCourtSample, CANDIDACIES, ELECTIONS } from './helpers/court-data.js';
import { electionCalendarOf, inaugurationOn, officeCodeOf, type CalendarElection } from '../src/elections/calendar.js';
import { inaugurationDay, propagandaSpans, spanHolding, spansWithin } from '@palanque/rules/election-calendar';

let app: TestApp;
let lines: CalendarElection[];
const byYear = (year: number) => lines.find((line) => line.year === year)!;

beforeAll(async () => {
  app = await startTestApp();
  await loadCourtSample(app.sequelize);
  lines = await electionCalendarOf(app.sequelize).elections();
});

afterAll(async () => {
  await app?.close();
});

describe('the seeded calendar', () => {
  it('holds the 2024 and 2028 municipal and the 2026 general elections, each date with its source', () => {
    expect(lines.map(({ title, year, scope, supplementary, registration_deadline, propaganda_starts_on, first_round_on, second_round_on, certification_on }) => ({ title, year, scope, supplementary, registration_deadline, propaganda_starts_on, first_round_on, second_round_on, certification_on }))).toEqual([
      { title: 'Eleições Municipais 2024', year: 2024, scope: 'municipal', supplementary: false, registration_deadline: '2024-08-15', propaganda_starts_on: '2024-08-16', first_round_on: '2024-10-06', second_round_on: '2024-10-27', certification_on: '2024-12-19' },
      { title: 'Eleições Gerais 2026', year: 2026, scope: 'general', supplementary: false, registration_deadline: '2026-08-15', propaganda_starts_on: '2026-08-16', first_round_on: '2026-10-04', second_round_on: '2026-10-25', certification_on: '2026-12-19' },
      { title: 'Eleições Municipais 2028', year: 2028, scope: 'municipal', supplementary: false, registration_deadline: '2028-08-15', propaganda_starts_on: '2028-08-16', first_round_on: '2028-10-01', second_round_on: '2028-10-29', certification_on: '2028-12-19' },
    ]);
    for (const line of lines) {
      expect(Object.keys(line.sources).sort()).toEqual(['certification_on', 'first_round_on', 'propaganda_starts_on', 'registration_deadline', 'second_round_on']);
      expect(line.sources.registration_deadline).toContain('Lei 9.504/1997 art. 11');
      expect(line.sources.propaganda_starts_on).toContain('art. 36');
      // Voting days are Sundays (first and last of October).
      for (const day of [line.first_round_on, line.second_round_on!]) expect(new Date(`${day}T00:00:00Z`).getUTCDay()).toBe(0);
    }
  });
});

describe('the election that judges an entity', () => {
  const calendar = () => electionCalendarOf(app.sequelize);

  it("is its linked candidacy's, whatever else it names", async () => {
    expect((await calendar().electionFor({ candidacy_id: CANDIDACIES.maria, disputa_eleitoral: ELECTIONS.state2022, cd_cargo: 3 }, '2026-11-29'))?.year).toBe(2024);
  });

  it('else the court election disputa_eleitoral names (a code, not a year), else the next of its office scope', async () => {
    expect((await calendar().electionFor({ disputa_eleitoral: ELECTIONS.municipal2024, cd_cargo: 11 }, '2026-11-29'))?.year).toBe(2024);
    // 2024 is not a court election code: the office decides.
    expect((await calendar().electionFor({ disputa_eleitoral: 2024, cd_cargo: 11 }, '2026-11-29'))?.year).toBe(2028);
    // A 2022 election has no calendar line: the office decides.
    expect((await calendar().electionFor({ disputa_eleitoral: ELECTIONS.state2022, cd_cargo: 3 }, '2026-09-01'))?.year).toBe(2026);
    expect((await calendar().electionFor({ cd_cargo: 13 }, '2024-10-27'))?.year).toBe(2024);
    expect((await calendar().electionFor({ cd_cargo: 13 }, '2024-10-28'))?.year).toBe(2028);
    expect((await calendar().electionFor({ cd_cargo: 6 }, '2026-10-26'))).toBeUndefined();
    expect(await calendar().electionFor({}, '2026-11-29')).toBeUndefined();
  });

  it('knows who runs in the second round: the court result 2º TURNO, or ballot segundo_turno for an office that has one', async () => {
    const maria = await calendar().contestOf({ candidacy_id: CANDIDACIES.maria }, '2026-11-29');
    expect(maria).toMatchObject({ runOff: true, cdCargo: 11, source: `candidacy ${CANDIDACIES.maria}` });
    expect(maria?.election.year).toBe(2024);
    expect(await calendar().contestOf({ candidacy_id: CANDIDACIES.joaoDavila }, '2026-11-29')).toMatchObject({ runOff: false, cdCargo: 13 });
    expect(await calendar().contestOf({ position: 'Vice-Prefeita', ballot: 'segundo_turno' }, '2026-11-29')).toMatchObject({ runOff: true, cdCargo: 12, source: 'office 12' });
    expect(await calendar().contestOf({ position: 'Vereadora', ballot: 'segundo_turno' }, '2026-11-29')).toMatchObject({ runOff: false, cdCargo: 13 });
    expect(officeCodeOf('Deputada Federal')).toBe(6);
  });
});

describe('propaganda spans', () => {
  it('end on the eve of each voting day and start the day after the first: no voting day is inside', () => {
    const y2024 = byYear(2024);
    expect(propagandaSpans(y2024, true)).toEqual([
      { starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 },
      { starts_on: '2024-10-07', ends_on: '2024-10-26', round: 2 },
    ]);
    expect(propagandaSpans(y2024, false)).toEqual([{ starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 }]);
    expect(spansWithin(propagandaSpans(y2024, true), { starts_on: '2024-10-01', ends_on: '2024-12-31' })).toEqual([
      { starts_on: '2024-10-01', ends_on: '2024-10-05', round: 1 },
      { starts_on: '2024-10-07', ends_on: '2024-10-26', round: 2 },
    ]);
    expect(spanHolding(propagandaSpans(y2024, true), { starts_on: '2024-10-01', ends_on: '2024-10-07' })).toBeUndefined();
    expect(spanHolding(propagandaSpans(y2024, true), { starts_on: '2024-10-07', ends_on: '2024-10-20' })).toMatchObject({ round: 2 });
  });
});

describe('inauguration by office', () => {
  it('follows CF arts. 29 III, 82, 28 and 57 §4º, with EC 111/2021 from 2027', () => {
    const y2026 = byYear(2026);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((office) => inaugurationOn(y2026, office))).toEqual(['2027-01-05', '2027-01-05', '2027-01-06', '2027-01-06', '2027-02-01', '2027-02-01', '2027-02-01', '2027-02-01']);
    expect([11, 12, 13].map((office) => inaugurationOn(byYear(2024), office))).toEqual(['2025-01-01', '2025-01-01', '2025-01-01']);
    expect([11, 13].map((office) => inaugurationOn(byYear(2028), office))).toEqual(['2029-01-01', '2029-01-01']);
    // Before 2027, the President and governors took office on 1 January.
    expect([1, 3, 6].map((office) => inaugurationDay({ year: 2022, supplementary: false }, office))).toEqual(['2023-01-01', '2023-01-01', '2023-02-01']);
    expect(inaugurationDay({ year: 2025, supplementary: true }, 11)).toBeUndefined();
  });
});

describe('the calendar operations', () => {
  const CALENDAR = '/api/elections/calendar/';
  let admin: TestUser;
  let user: TestUser;
  const supplementary = {
    title: 'Eleição Suplementar de Castelândia (GO) 2027', year: 2027, scope: 'municipal', supplementary: true, uf: 'GO', municipality_ibge: 5205059,
    registration_deadline: '2027-03-10', propaganda_starts_on: '2027-03-11', first_round_on: '2027-04-04', second_round_on: null, certification_on: '2027-04-30',
    sources: { registration_deadline: 'TRE-GO', propaganda_starts_on: 'TRE-GO; Lei 9.504/1997 art. 36', first_round_on: 'TRE-GO (Código Eleitoral art. 224)', second_round_on: 'none (CF art. 29 II)', certification_on: 'TRE-GO' },
  };
  const auditActions = async () =>
    ((await app.sequelize.query("SELECT details FROM audit_events WHERE event = 'election_calendar_changed' ORDER BY id", { type: 'SELECT' })) as Array<{ details: string }>).map((row) => JSON.parse(row.details));

  beforeAll(async () => {
    admin = await createAdmin(app);
    user = await createUser(app);
  });

  it('lists the calendar for any signed-in user, with inauguration days by office', async () => {
    const listed = await request(app.baseUrl, 'GET', CALENDAR, user.headers);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((line: { year: number }) => line.year)).toEqual([2024, 2026, 2028]);
    expect(listed.body.data[1].inaugurations).toEqual({ 1: '2027-01-05', 2: '2027-01-05', 3: '2027-01-06', 4: '2027-01-06', 5: '2027-02-01', 6: '2027-02-01', 7: '2027-02-01', 8: '2027-02-01' });
    expectError(await request(app.baseUrl, 'GET', CALENDAR, {}), 401, 'unauthorized');
  });

  it('lets platform admins only add, replace and remove a supplementary election, each change audited', async () => {
    expectError(await request(app.baseUrl, 'POST', CALENDAR, user.headers, supplementary), 403, 'forbidden');
    const created = await request(app.baseUrl, 'POST', CALENDAR, admin.headers, supplementary);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ ...supplementary, inaugurations: {}, updated_by: admin.user.id });
    const id = created.body.data.id;

    const outOfOrder = await request(app.baseUrl, 'PUT', `${CALENDAR}${id}/`, admin.headers, { ...supplementary, first_round_on: '2027-03-01' });
    expectError(outOfOrder, 422, 'validation_failed');
    expect(outOfOrder.body.error.details.map((detail: { field: string; rule: string }) => `${detail.field}:${detail.rule}`)).toEqual(['first_round_on:calendar_order']);
    const noState = await request(app.baseUrl, 'POST', CALENDAR, admin.headers, { ...supplementary, uf: null });
    expect(noState.body.error.details.map((detail: { field: string; rule: string }) => `${detail.field}:${detail.rule}`)).toEqual(['uf:required']);

    const updated = await request(app.baseUrl, 'PUT', `${CALENDAR}${id}/`, admin.headers, { ...supplementary, first_round_on: '2027-04-11', certification_on: '2027-05-07' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toMatchObject({ id, first_round_on: '2027-04-11' });
    expectError(await request(app.baseUrl, 'DELETE', `${CALENDAR}${id}/`, user.headers), 403, 'forbidden');
    const removed = await request(app.baseUrl, 'DELETE', `${CALENDAR}${id}/`, admin.headers);
    expect(removed.status, removed.text).toBe(200);
    expectError(await request(app.baseUrl, 'DELETE', `${CALENDAR}${id}/`, admin.headers), 404, 'not_found');
    expectError(await request(app.baseUrl, 'PUT', `${CALENDAR}${id}/`, admin.headers, supplementary), 404, 'not_found');
    expect(await auditActions()).toEqual([
      { action: 'created', calendar_id: id },
      { action: 'updated', calendar_id: id },
      { action: 'deleted', calendar_id: id },
    ]);
  });
});
