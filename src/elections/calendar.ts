/**
 * The election calendar (issue 42, section 1): one line per election, as data (migration 0032, table
 * `election_calendar`), with its registration deadline (Lei 9.504/1997 art. 11), propaganda start (art.
 * 36), voting days (CF arts. 28, 29 II, 77), certification of the winners (diplomação, the court's
 * calendar) and the legal source of each date. Inauguration days follow the Constitution by office
 * (`inaugurationOn`, packages/rules/src/election-calendar.ts). Platform admins change the lines (handlers.ts, audited).
 *
 * What holds:
 * - The table is read on every use (a handful of rows, one indexed read), so a line an admin changed on
 *   any instance judges the next send there.
 * - The election that judges an entity (`electionFor`): its linked candidacy's; else the one its
 *   `disputa_eleitoral` names (the court's election code, CD_ELEICAO, of either round, as listElections
 *   lists it: never a year); else the next ordinary election of its office's scope (municipal for mayors,
 *   vice-mayors and councillors, general for the others) whose last voting day is today or later. A court
 *   election is matched to the line whose first or second round falls on its day, in its scope; else, for
 *   an ordinary court election, to the ordinary line of its year and scope. A hint that matches no line
 *   gives way to the next hint.
 * - `contestOf` adds whether the entity runs in the second round: its candidacy's result is `2º TURNO`
 *   or its candidacy is of a second-round election; without a candidacy, its `ballot` is `segundo_turno`;
 *   and in either case only for an office that has a second round (CF arts. 28, 29 II, 77).
 */
import { QueryTypes, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import {
  inaugurationDay,
  lineForCourtElection,
  nextLineOfScope,
  officeCodeOf,
  RUN_OFF_OFFICES,
  runsSecondRound,
  scopeOfCargo,
  type CalendarSources,
} from '@palanque/rules/election-calendar';
import { asIsoTimestamp, readerOf } from '../db/reader.js';

/** One election of the calendar (Brasília days, YYYY-MM-DD): the contract's line without the inauguration days, which `inaugurationOn` derives. */
export type CalendarElection = Omit<components['schemas']['ElectionCalendarLine'], 'inaugurations'>;

/** A line as an admin writes it (no id, no audit columns). */
export type CalendarLine = Omit<CalendarElection, 'id' | 'updated_at' | 'updated_by'>;

/** The hints that name an entity's election. */
export interface ElectionHints {
  candidacy_id?: number | null;
  disputa_eleitoral?: number | null;
  cd_cargo?: number | null;
}

/** What an entity runs in, as the rules read it. */
export interface EntityContest {
  election: CalendarElection;
  /** The entity runs in the second round (and its office has one). */
  runOff: boolean;
  /** The court office code, when known. */
  cdCargo: number | undefined;
  /** How the election was found (for messages): `candidacy 501`, `disputa_eleitoral 619`, `position Prefeito`. */
  source: string;
}

/**
 * The day the winners of `cdCargo` (court office code) take office after `election` (CF arts. 29 III,
 * 82, 28, 57 §4º; EC 111/2021); undefined for a supplementary election or an unknown office.
 */
export function inaugurationOn(election: CalendarElection, cdCargo: number): string | undefined {
  return inaugurationDay(election, cdCargo);
}

interface CourtElectionRow {
  ano: unknown;
  cd_tipo_eleicao: unknown;
  nr_turno: unknown;
  dt_eleicao: unknown;
  tp_abrangencia: unknown;
}

const COLUMNS =
  'id, title, year, scope, supplementary, uf, municipality_ibge, registration_deadline, propaganda_starts_on, first_round_on, second_round_on, certification_on, sources, updated_at, updated_by';

export class ElectionCalendar {
  constructor(private readonly sequelize: Sequelize) {}

  /** Every line, by first round, then id. */
  async elections(): Promise<CalendarElection[]> {
    const rows = await readerOf(this.sequelize).rows<Record<string, unknown>>(`SELECT ${COLUMNS} FROM election_calendar ORDER BY first_round_on, id`);
    return rows.map(lineOf);
  }

  /** One line, if it exists. */
  async election(id: number): Promise<CalendarElection | undefined> {
    if (!Number.isSafeInteger(id) || id < 1 || id > 2147483647) return undefined;
    const row = await readerOf(this.sequelize).row<Record<string, unknown>>(`SELECT ${COLUMNS} FROM election_calendar WHERE id = ?`, [id]);
    return row ? lineOf(row) : undefined;
  }

  /** Adds a line (a platform admin's, checked by calendar-handlers.ts) and returns it as stored. */
  async create(line: CalendarLine, actorId: number): Promise<CalendarElection> {
    const row = rowOf(line, actorId);
    const columns = Object.keys(row);
    const sql = `INSERT INTO election_calendar (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
    if (this.sequelize.getDialect() === 'postgres') {
      const [inserted] = await this.sequelize.query<{ id: unknown }>(`${sql} RETURNING id`, { replacements: Object.values(row), type: QueryTypes.SELECT });
      return (await this.election(Number(inserted!.id)))!;
    }
    // SQLite answers an INSERT with the new row's id (lastID).
    const [lastId] = (await this.sequelize.query(sql, { replacements: Object.values(row), type: QueryTypes.INSERT })) as unknown as [number, number];
    return (await this.election(Number(lastId)))!;
  }

  /** Replaces line `id`; undefined when there is none. */
  async update(id: number, line: CalendarLine, actorId: number): Promise<CalendarElection | undefined> {
    if (!(await this.election(id))) return undefined;
    const row = rowOf(line, actorId);
    await this.sequelize.query(`UPDATE election_calendar SET ${Object.keys(row).map((column) => `${column} = ?`).join(', ')} WHERE id = ?`, { replacements: [...Object.values(row), id] });
    return this.election(id);
  }

  /** Removes line `id` and returns it as it was; undefined when there is none. */
  async remove(id: number): Promise<CalendarElection | undefined> {
    const before = await this.election(id);
    if (!before) return undefined;
    await this.sequelize.query('DELETE FROM election_calendar WHERE id = ?', { replacements: [id] });
    return before;
  }

  /** The election that judges an entity (see the opening comment). */
  async electionFor(hints: ElectionHints, today: string): Promise<CalendarElection | undefined> {
    return (await this.resolve(hints, today))?.election;
  }

  /** The entity's contest: its election, whether it runs in the second round, its office. */
  async contestOf(entity: { candidacy_id?: number | null; disputa_eleitoral?: number | null; position?: string | null; ballot?: string | null }, today: string): Promise<EntityContest | undefined> {
    const candidacy = await this.candidacy(entity.candidacy_id);
    const cdCargo = candidacy?.cd_cargo ?? officeCodeOf(entity.position);
    const found = await this.resolve({ candidacy_id: entity.candidacy_id, disputa_eleitoral: entity.disputa_eleitoral, cd_cargo: cdCargo }, today, candidacy);
    if (!found) return undefined;
    const runsOff = found.fromCandidacy && candidacy ? candidacy.runOff : entity.ballot === 'segundo_turno';
    const runOff = runsOff && cdCargo !== undefined && RUN_OFF_OFFICES.has(cdCargo) && found.election.second_round_on !== null;
    return { election: found.election, runOff, cdCargo, source: found.source };
  }

  private async resolve(hints: ElectionHints, today: string, known?: Candidacy): Promise<{ election: CalendarElection; source: string; fromCandidacy: boolean } | undefined> {
    const lines = await this.elections();
    const candidacy = known ?? (await this.candidacy(hints.candidacy_id));
    if (candidacy) {
      const election = await this.byCourtCode(candidacy.cd_eleicao, lines);
      if (election) return { election, source: `candidacy ${candidacy.id}`, fromCandidacy: true };
    }
    if (hints.disputa_eleitoral !== null && hints.disputa_eleitoral !== undefined) {
      const election = await this.byCourtCode(hints.disputa_eleitoral, lines);
      if (election) return { election, source: `disputa_eleitoral ${hints.disputa_eleitoral}`, fromCandidacy: false };
    }
    if (hints.cd_cargo !== null && hints.cd_cargo !== undefined) {
      const election = nextLineOfScope(lines, scopeOfCargo(hints.cd_cargo), today);
      if (election) return { election, source: `office ${hints.cd_cargo}`, fromCandidacy: false };
    }
    return undefined;
  }

  /** The line of the court's election `code`: by voting day and scope, else (ordinary elections) by year and scope. */
  private async byCourtCode(code: number, lines: readonly CalendarElection[]): Promise<CalendarElection | undefined> {
    if (!Number.isSafeInteger(code) || code < 1 || code > 2147483647) return undefined;
    const court = await readerOf(this.sequelize).row<CourtElectionRow>('SELECT ano, cd_tipo_eleicao, nr_turno, dt_eleicao, tp_abrangencia FROM tse_elections WHERE cd_eleicao = ?', [code]);
    if (!court) return undefined;
    return lineForCourtElection(lines, { ano: Number(court.ano), cd_tipo_eleicao: Number(court.cd_tipo_eleicao), dt_eleicao: dateOnly(court.dt_eleicao), tp_abrangencia: String(court.tp_abrangencia) });
  }

  private async candidacy(id: number | null | undefined): Promise<Candidacy | undefined> {
    if (id === null || id === undefined || !Number.isSafeInteger(id) || id < 1 || id > 2147483647) return undefined;
    const row = await readerOf(this.sequelize).row<{ id: unknown; cd_eleicao: unknown; cd_cargo: unknown; nr_turno: unknown; result: unknown }>(
      `SELECT c.id, c.cd_eleicao, c.cd_cargo, e.nr_turno, r.label AS result
         FROM tse_candidacies c
         LEFT JOIN tse_elections e ON e.cd_eleicao = c.cd_eleicao
         LEFT JOIN tse_codes r ON r.code_table = 'sit_tot_turno' AND r.code = c.cd_sit_tot_turno
        WHERE c.id = ?`,
      [id],
    );
    if (!row) return undefined;
    const runOff = Number(row.nr_turno) === 2 || runsSecondRound(row.result === null || row.result === undefined ? null : String(row.result));
    return { id: Number(row.id), cd_eleicao: Number(row.cd_eleicao), cd_cargo: Number(row.cd_cargo), runOff };
  }
}

interface Candidacy {
  id: number;
  cd_eleicao: number;
  cd_cargo: number;
  runOff: boolean;
}

const calendars = new WeakMap<Sequelize, ElectionCalendar>();

/** This database's calendar (one object per Sequelize instance). */
export function electionCalendarOf(sequelize: Sequelize): ElectionCalendar {
  let calendar = calendars.get(sequelize);
  if (!calendar) {
    calendar = new ElectionCalendar(sequelize);
    calendars.set(sequelize, calendar);
  }
  return calendar;
}

/** YYYY-MM-DD, from a DATEONLY as either database gives it. */
function dateOnly(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

function rowOf(line: CalendarLine, actorId: number): Record<string, unknown> {
  return {
    title: line.title,
    year: line.year,
    scope: line.scope,
    supplementary: line.supplementary,
    uf: line.uf,
    municipality_ibge: line.municipality_ibge,
    registration_deadline: line.registration_deadline,
    propaganda_starts_on: line.propaganda_starts_on,
    first_round_on: line.first_round_on,
    second_round_on: line.second_round_on,
    certification_on: line.certification_on,
    sources: JSON.stringify(line.sources),
    updated_at: new Date(),
    updated_by: actorId,
  };
}

function lineOf(row: Record<string, unknown>): CalendarElection {
  const day = (value: unknown) => (value === null || value === undefined ? null : dateOnly(value));
  return {
    id: Number(row.id),
    title: String(row.title),
    year: Number(row.year),
    scope: row.scope === 'general' ? 'general' : 'municipal',
    supplementary: row.supplementary === true || row.supplementary === 1 || row.supplementary === '1',
    uf: row.uf === null || row.uf === undefined ? null : String(row.uf),
    municipality_ibge: row.municipality_ibge === null || row.municipality_ibge === undefined ? null : Number(row.municipality_ibge),
    registration_deadline: dateOnly(row.registration_deadline),
    propaganda_starts_on: dateOnly(row.propaganda_starts_on),
    first_round_on: dateOnly(row.first_round_on),
    second_round_on: day(row.second_round_on),
    certification_on: dateOnly(row.certification_on),
    sources: JSON.parse(String(row.sources)) as CalendarSources,
    updated_at: asIsoTimestamp(row.updated_at as Date | string),
    updated_by: row.updated_by === null || row.updated_by === undefined ? null : Number(row.updated_by),
  };
}

export { officeCodeOf, scopeOfCargo, runsSecondRound };
