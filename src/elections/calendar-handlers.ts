/**
 * The HTTP side of the election calendar (calendar.ts; issue 42): any logged-in user reads it, platform
 * admins add, replace and remove lines. Every change is checked (real days in order, a supplementary
 * line names its state, an ordinary one none) and recorded in the audit log (`election_calendar_changed`).
 */
import type { Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { inaugurationDay, MUNICIPAL_OFFICES } from '@palanque/rules/election-calendar';
import type { AuditLog } from '../accounts/audit-log.js';
import { callerOf, requireAdmin } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { notFound, type ErrorDetail } from '../http/errors.js';
import { invalidBody } from '../http/body-fields.js';
import type { OperationHandlers } from '../http/operations.js';
import { electionCalendarOf, type CalendarElection, type CalendarLine } from './calendar.js';

type CalendarOperations = 'listElectionCalendar' | 'createElectionCalendarLine' | 'updateElectionCalendarLine' | 'deleteElectionCalendarLine';
type LineView = components['schemas']['ElectionCalendarLine'];

/** The court office codes each scope fills. */
const GENERAL_OFFICES = [1, 2, 3, 4, 5, 6, 7, 8];

export interface CalendarHandlerDependencies {
  sequelize: Sequelize;
  audit?: Pick<AuditLog, 'record'>;
}

export function calendarHandlers({ sequelize, audit }: CalendarHandlerDependencies): Pick<Required<OperationHandlers>, CalendarOperations> {
  const calendar = electionCalendarOf(sequelize);
  const audited = (actorId: number, address: string | undefined, action: 'created' | 'updated' | 'deleted', id: number) =>
    audit?.record({ event: 'election_calendar_changed', actorId, ...(address ? { address } : {}), details: { action, calendar_id: id } });

  return {
    async listElectionCalendar(_req, res) {
      callerOf(res);
      const lines = await calendar.elections();
      sendEnvelope(res, 200, lines.map(viewOf), `${lines.length} election${lines.length === 1 ? '' : 's'} in the calendar.`);
    },

    async createElectionCalendarLine(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const line = checkedLine(req.body as CalendarLine);
      const created = await calendar.create(line, caller.user.id);
      await audited(caller.user.id, req.ip, 'created', created.id);
      sendEnvelope(res, 201, viewOf(created), `Election calendar line ${created.id} saved.`);
    },

    async updateElectionCalendarLine(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const id = Number(req.params.calendar_id);
      const line = checkedLine(req.body as CalendarLine);
      const updated = await calendar.update(id, line, caller.user.id);
      if (!updated) throw unknownLine(id);
      await audited(caller.user.id, req.ip, 'updated', id);
      sendEnvelope(res, 200, viewOf(updated), `Election calendar line ${id} saved.`);
    },

    async deleteElectionCalendarLine(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const id = Number(req.params.calendar_id);
      const removed = await calendar.remove(id);
      if (!removed) throw unknownLine(id);
      await audited(caller.user.id, req.ip, 'deleted', id);
      sendEnvelope(res, 200, viewOf(removed), `Election calendar line ${id} removed.`);
    },
  };
}

/** A line as the API shows it: with the inauguration day of each office it fills. */
function viewOf(line: CalendarElection): LineView {
  const offices = line.scope === 'municipal' ? [...MUNICIPAL_OFFICES] : GENERAL_OFFICES;
  const inaugurations: Record<string, string> = {};
  for (const office of offices) {
    const day = inaugurationDay(line, office);
    if (day) inaugurations[String(office)] = day;
  }
  return { ...line, inaugurations };
}

/** The body's days are real and in order; a supplementary line names its state, an ordinary one none. */
function checkedLine(body: CalendarLine): CalendarLine {
  const problems: ErrorDetail[] = [];
  const days = ['registration_deadline', 'propaganda_starts_on', 'first_round_on', 'second_round_on', 'certification_on'] as const;
  for (const field of days) {
    const value = body[field];
    if (value === null) continue;
    const day = new Date(`${value}T00:00:00Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) problems.push({ location: 'body', field, rule: 'real_date', message: 'must be a real calendar date', value });
  }
  if (problems.length === 0) {
    const order = (field: (typeof days)[number], rule: boolean, message: string) => {
      if (!rule) problems.push({ location: 'body', field, rule: 'calendar_order', message, value: body[field] });
    };
    order('propaganda_starts_on', body.registration_deadline < body.propaganda_starts_on, `must be after registration_deadline (${body.registration_deadline})`);
    order('first_round_on', body.propaganda_starts_on <= body.first_round_on, `must not be before propaganda_starts_on (${body.propaganda_starts_on})`);
    if (body.second_round_on !== null) order('second_round_on', body.first_round_on < body.second_round_on, `must be after first_round_on (${body.first_round_on})`);
    const lastRound = body.second_round_on ?? body.first_round_on;
    order('certification_on', lastRound <= body.certification_on, `must not be before the last round (${lastRound})`);
    if (Number(body.first_round_on.slice(0, 4)) !== body.year) problems.push({ location: 'body', field: 'year', rule: 'calendar_order', message: `must be the year of first_round_on (${body.first_round_on})`, value: body.year });
  }
  if (body.supplementary && body.uf === null) problems.push({ location: 'body', field: 'uf', rule: 'required', message: 'a supplementary election names its state', value: null });
  if (!body.supplementary) {
    for (const field of ['uf', 'municipality_ibge'] as const) {
      if (body[field] !== null) problems.push({ location: 'body', field, rule: 'ordinary_scope', message: 'must be null for an ordinary election (it is held everywhere)', value: body[field] });
    }
  }
  if (body.scope === 'general' && body.municipality_ibge !== null && body.supplementary) {
    problems.push({ location: 'body', field: 'municipality_ibge', rule: 'ordinary_scope', message: 'must be null for a general election (it is held in a state)', value: body.municipality_ibge });
  }
  if (problems.length > 0) throw invalidBody(problems);
  return body;
}

function unknownLine(id: number) {
  return notFound(`There is no election calendar line ${id}.`, [
    { location: 'path', field: 'calendar_id', rule: 'existing_calendar_line', message: 'must be the id of a line of the election calendar (listElectionCalendar)', value: id },
  ]);
}
