/**
 * The SMS compliance operations of the stateful mock (src/messaging/compliance-handlers.ts): the election
 * calendar the windows are drawn from, an entity's mode and window (relaxing the mode is a platform
 * admin's decision, a typed window lies inside a legal span), a credential's name and footer, and the
 * preview of a campaign, which names every rule it breaks whatever the mode.
 */
import type { HttpHandler } from 'msw';
import { errorResponse, type ErrorDetail } from '../../msw-validation.js';
import { envelope, forbidden, invalidBody, notFound } from '../answers.js';
import { entityFor, may, roleIn, type On } from '../auth.js';
import { inaugurationsOf, mockCalendarOf, mockLegalWindowProblem } from '../elections/calendar.js';
import { newId, now, type Json, type StoredCompliance } from '../store.js';
import { campaignPlanOf } from './campaign-plan.js';
import { brasiliaDay, complianceOf, footerOf } from './compliance.js';
import { maskPhone } from './phones.js';

export function complianceHandlers(on: On): HttpHandler[] {
  const where = { location: 'query', field: 'entity_id' } as const;
  return [
    // The election calendar (src/elections/calendar-handlers.ts): the list, as seeded or as the mock's state holds it.
    on('listElectionCalendar', (context) => {
      const lines = mockCalendarOf(context.state).map((line) => ({ ...line, inaugurations: inaugurationsOf(line) }));
      return envelope(200, lines, `${lines.length} election${lines.length === 1 ? '' : 's'} in the calendar.`);
    }),
    on('getSmsCompliance', (context) => {
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), where);
      if (entity instanceof Response) return entity;
      const settings = complianceOf(context.state, entity);
      return envelope(200, settings, `SMS compliance of entity ${entity.id}: ${settings.mode}${settings.updated_at === null ? ' (the default)' : ''}.`);
    }),
    on('setSmsCompliance', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), where);
      if (entity instanceof Response) return entity;
      const role = roleIn(entity, user)!;
      if (!may(user, role, 'manageTeam')) return forbidden(`Your role in this team (${role}) may not set its SMS compliance: its owner and admins may.`);
      const window = (body.window ?? null) as StoredCompliance['window'];
      const realDay = (day: string) => {
        const time = Date.parse(`${day}T00:00:00Z`);
        return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === day;
      };
      const unreal = window ? (['starts_on', 'ends_on'] as const).filter((end) => !realDay(window[end])) : [];
      if (unreal.length > 0) return invalidBody(unreal.map((end) => ({ location: 'body', field: `window.${end}`, rule: 'real_date', message: 'must be a real calendar date', value: window![end] })));
      if (window && window.ends_on < window.starts_on) return invalidBody([{ location: 'body', field: 'window.ends_on', rule: 'window_order', message: `must not be before window.starts_on (${window.starts_on})`, value: window.ends_on }]);
      // A typed window lies inside one legal propaganda span (issue 42; elections/calendar.ts).
      const outsideLegal = window && mockLegalWindowProblem(state.court, mockCalendarOf(state), entity.id, entity.record, window, brasiliaDay());
      if (outsideLegal) return invalidBody([outsideLegal]);
      const before = complianceOf(state, entity);
      const mode = body.mode as StoredCompliance['mode'];
      // Relaxing the mode is a platform admin's decision (issue 42), as the server answers.
      const strictness = ['off', 'warn', 'enforce'];
      if (strictness.indexOf(mode) < strictness.indexOf(before.mode) && !user.is_admin) {
        return errorResponse(403, 'forbidden', `Only a platform admin may relax the SMS compliance of entity ${entity.id} from ${before.mode} to ${mode}: under ${mode} a campaign that breaks the electoral rules is sent.`, [
          { location: 'body', field: 'mode', rule: 'platform_admin_to_relax', message: `relaxes ${before.mode} to ${mode}: a platform admin's decision (enforce is the default)`, value: mode },
        ]);
      }
      state.compliance.set(entity.id, { mode, window, updated_at: now(), updated_by: user.id });
      const changes = [
        { field: 'mode', before: before.mode, after: mode },
        { field: 'window_starts_on', before: before.window?.starts_on ?? null, after: window?.starts_on ?? null },
        { field: 'window_ends_on', before: before.window?.ends_on ?? null, after: window?.ends_on ?? null },
      ].filter((change) => change.before !== change.after);
      if (changes.length > 0) state.history.push({ id: newId(state, state.history.map((row) => row.id)), entity_id: entity.id, occurred_at: now(), subject: 'sms_compliance', subject_id: null, action: 'updated', actor_id: user.id, changes });
      const settings = complianceOf(state, entity);
      return envelope(200, settings, `SMS compliance of entity ${entity.id}: ${settings.mode}.`);
    }),
    on('updateSmsCredential', ({ url, body, user, state }) => {
      const id = Number(/\/sms\/credentials\/(\d+)\//.exec(url.pathname)?.[1]);
      const credential = state.credentials.get(id);
      const entity = credential?.entity_id === null || credential === undefined ? undefined : state.entities.get(credential.entity_id);
      const role = entity && roleIn(entity, user);
      if (!credential || !(user.is_admin || role)) {
        return notFound(`There is no SMS credential ${id} in your teams.`, [{ location: 'path', field: 'credential_id', rule: 'existing_credential', message: 'must be the id of a credential of one of your teams', value: id }]);
      }
      if (!may(user, role ?? 'admin', 'manageTeam')) return forbidden(`Your role in this team (${role}) may not change its SMS credentials: its owner and admins may.`);
      const problems: ErrorDetail[] = [];
      for (const field of ['id', 'provider', 'account_id', 'sender_id', 'entity_id'] as const) {
        if (body[field] !== undefined && body[field] !== credential[field]) {
          problems.push({ location: 'body', field, rule: 'immutable', message: `cannot change (it is ${String(credential[field] ?? 'null')}): add a credential for another account or sender`, value: body[field] as string });
        }
      }
      const changes: Json = {};
      if (body.name !== undefined) {
        changes.name = String(body.name).trim();
        if (changes.name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      }
      if (body.footer !== undefined) {
        const read = footerOf(body.footer);
        if ('problem' in read) problems.push(read.problem);
        else changes.footer = read.footer;
      }
      if (problems.length > 0) return invalidBody(problems);
      const updated = { ...credential, ...changes };
      state.credentials.set(id, updated);
      const fields = (['name', 'footer'] as const).filter((field) => field in changes && changes[field] !== (credential[field] ?? null));
      if (entity && fields.length > 0) {
        const historyChanges = fields.map((field) => ({ field, before: credential[field] ?? null, after: changes[field] }));
        state.history.push({ id: newId(state, state.history.map((row) => row.id)), entity_id: entity.id, occurred_at: now(), subject: 'sms_credential', subject_id: id, action: 'updated', actor_id: user.id, changes: historyChanges });
      }
      return envelope(200, updated, `Credential ${id} updated.`);
    }),
    on('previewSmsCampaign', (context) => {
      const plan = campaignPlanOf(context, true);
      if (plan instanceof Response) return plan;
      const { text, footer, encoding, segments, numbers: distinct, rejected, notMobile, judgement: { mode, warnings } } = plan;
      const preview = {
        text,
        footer,
        encoding,
        segments,
        messages: distinct.length,
        rejected,
        opted_out_skipped: plan.optedOutSkipped,
        not_mobile_skipped: notMobile.length,
        not_mobile_examples: notMobile.slice(0, 5).map(maskPhone),
        total_segments: distinct.length * segments,
        compliance: { mode, warnings, would_refuse: mode === 'enforce' && warnings.length > 0 },
      };
      const warned = warnings.length === 0 ? '' : `; ${warnings.length} compliance warning${warnings.length === 1 ? '' : 's'}`;
      return envelope(200, preview, `Preview: ${distinct.length} message${distinct.length === 1 ? '' : 's'} of ${segments} segment${segments === 1 ? '' : 's'}${warned}.`);
    }),
  ];
}
