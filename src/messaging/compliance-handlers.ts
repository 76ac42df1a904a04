/**
 * The HTTP side of the electoral rules of SMS campaigns (issue 23, compliance.ts): an entity's
 * compliance mode and propaganda window (every team role reads them, the owner and admins set them), a
 * credential's name and footer (platform admins, and the owner and admins of its entity), and the
 * preview of a campaign, which reads it as sendSmsCampaign would and sends nothing. Changes to the
 * settings and to a credential are recorded in the entity's edit history, in their own transaction.
 * Relaxing the mode (`enforce` to `warn` or `off`, `warn` to `off`: compliance.ts's `relaxes`) is a
 * platform admin's decision (403 `platform_admin_to_relax` for the entity's owner and admins), judged
 * against the settings the change replaces, under the entity's lock, and audited
 * (`sms_compliance_relaxed`): under `warn` or `off` a campaign that breaks the electoral rules goes.
 * The preview names every problem at once (campaign-plan.ts, `everyRule`).
 */
import type { Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { callerOf, type Caller } from '../http/auth.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { AuditLog } from '../accounts/audit-log.js';
import { changedFields, readThenWrite } from '../entities/history.js';
import type { Entities } from '../entities/index.js';
import { dateOnly, DEFAULT_MODE, footerProblem, normalisedFooter, relaxes, type SmsComplianceSettings } from './compliance.js';
import type { ComplianceRow, CredentialRow } from './models.js';
import { sendingCredential } from './handlers.js';
import type { SmsCredential, Sms } from './sms.js';
import { counted } from '../http/counted.js';
import { spanHolding } from '@palanque/rules/election-calendar';
import type { SmsCompliance } from './compliance.js';

type ComplianceOperations = 'getSmsCompliance' | 'setSmsCompliance' | 'updateSmsCredential' | 'previewSmsCampaign';
type CredentialChanges = components['schemas']['UpdateSmsCredentialRequest'];

/** The credential's fields a PATCH may send back as read, but not change (a new account or sender is a new credential). */
const UNCHANGEABLE = ['id', 'provider', 'account_id', 'sender_id', 'entity_id'] as const;
/** The settings' fields as the entity's history names them. */
const SETTINGS_FIELDS = ['mode', 'window_starts_on', 'window_ends_on'];

export interface ComplianceHandlerDependencies {
  sms: Sms;
  entities: Pick<Entities, 'models' | 'teams'> & Partial<Pick<Entities, 'history'>>;
  /** Where a relaxed mode is recorded (`sms_compliance_relaxed`). */
  audit?: Pick<AuditLog, 'record'>;
}

export function complianceHandlers({ sms, entities, audit }: ComplianceHandlerDependencies): Pick<Required<OperationHandlers>, ComplianceOperations> {
  const { teams } = entities;
  const sequelize = entities.models.Entity.sequelize!;

  return {
    async getSmsCompliance(req, res) {
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const settings = await sms.compliance.settingsOf(entity);
      sendEnvelope(res, 200, settings, settingsMessage(settings));
    },

    async setSmsCompliance(req, res) {
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      if (!teams.may(caller, role, 'manageTeam')) {
        throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not set its SMS compliance: its owner and admins may.`);
      }
      const { mode } = req.body;
      const window = req.body.window ?? null;
      if (window) {
        checkWindow(window);
        await checkLegalWindow(sms.compliance, entity.id, window);
      }
      const relaxed = await readThenWrite(sequelize, async (transaction) => {
        // The entity's row is locked on PostgreSQL, so the history's "before" is the settings this change replaces.
        await entities.models.Entity.findByPk(entity.id, { attributes: ['id'], transaction, lock: transaction.LOCK.UPDATE });
        const before = await sms.compliance.set(entity.id, { mode, window }, caller.user.id, transaction);
        const previous = before?.mode ?? DEFAULT_MODE;
        // Thrown inside the transaction: the change is rolled back.
        if (relaxes(previous, mode) && !caller.user.is_admin) throw relaxRefused(entity.id, previous, mode);
        const changes = changedFields(settingsFieldsOf(before), { mode, window_starts_on: window?.starts_on ?? null, window_ends_on: window?.ends_on ?? null }, SETTINGS_FIELDS);
        await entities.history?.record({ entityId: entity.id, subject: 'sms_compliance', action: 'updated', actorId: caller.user.id, changes }, transaction);
        return relaxes(previous, mode) ? previous : undefined;
      });
      if (relaxed) {
        await audit?.record({ event: 'sms_compliance_relaxed', actorId: caller.user.id, address: req.ip, details: { entity_id: entity.id, from: relaxed, to: mode } });
      }
      const settings = await sms.compliance.settingsOf(entity);
      sendEnvelope(res, 200, settings, settingsMessage(settings));
    },

    async updateSmsCredential(req, res) {
      const caller = callerOf(res);
      const id = Number(req.params.credential_id);
      const credential = await credentialFor(caller, id);
      const changes = credentialChanges(credential, req.body);
      const recordChange = async (before: SmsCredential, after: SmsCredential, transaction: Transaction) => {
        if (credential.entity_id === null || !entities.history) return;
        const fields = changedFields(before, after, ['name', 'footer']);
        await entities.history.record({ entityId: credential.entity_id, subject: 'sms_credential', subjectId: id, action: 'updated', actorId: caller.user.id, changes: fields }, transaction);
      };
      const updated = await sms.updateCredential(id, changes, recordChange);
      if (!updated) throw unknownCredential(id);
      sendEnvelope(res, 200, updated, `Credential ${id} updated.`);
    },

    async previewSmsCampaign(req, res) {
      const caller = callerOf(res);
      const found = await sendingCredential(sms, caller, req.body.credencial);
      // Every problem at once: a 422 of the body names the compliance rules broken too, whatever the mode.
      const plan = await sms.plan(found.credential, req.body, { everyRule: true });
      const { mode, warnings } = plan.judgement;
      const messages = plan.recipients.length;
      const preview = {
        text: plan.text,
        footer: plan.footer,
        encoding: plan.encoding,
        segments: plan.segments,
        messages,
        rejected: plan.rejected,
        opted_out_skipped: plan.optedOutSkipped,
        not_mobile_skipped: plan.notMobileSkipped,
        not_mobile_examples: plan.notMobileExamples,
        total_segments: messages * plan.segments,
        compliance: { mode, warnings, would_refuse: mode === 'enforce' && warnings.length > 0 },
      };
      const warned = warnings.length === 0 ? '' : `; ${counted(warnings.length, 'compliance warning')}`;
      sendEnvelope(res, 200, preview, `Preview: ${counted(messages, 'message')} of ${counted(plan.segments, 'segment')}${warned}.`);
    },
  };

  /**
   * The credential `id` if the caller may change it: platform admins any; the owner and admins of its
   * entity theirs (403 for the entity's other roles); 404 for everyone else, as for a missing one.
   */
  async function credentialFor(caller: Caller, id: number): Promise<CredentialRow> {
    const credential = Number.isSafeInteger(id) ? ((await sms.models.Credential.findByPk(id, { raw: true })) as CredentialRow | null) : null;
    if (!credential) throw unknownCredential(id);
    if (caller.user.is_admin) return credential;
    const role = credential.entity_id === null ? undefined : (await teams.rolesOf(caller, [credential.entity_id])).get(credential.entity_id);
    if (!role) throw unknownCredential(id);
    if (!teams.may(caller, role, 'manageTeam')) {
      throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not change its SMS credentials: its owner and admins may.`);
    }
    return credential;
  }
}

/** The changes a PATCH asks for, checked; a field sent back as read is accepted, a changed one refused. */
function credentialChanges(credential: CredentialRow, body: CredentialChanges): { name?: string; footer?: string | null } {
  const problems: ErrorDetail[] = [];
  for (const field of UNCHANGEABLE) {
    const sent = body[field];
    if (sent !== undefined && sent !== credential[field]) {
      problems.push({
        location: 'body',
        field,
        rule: 'immutable',
        message: `cannot change (it is ${credential[field] ?? 'null'}): add a credential for another account or sender`,
        value: sent,
      });
    }
  }
  const changes: { name?: string; footer?: string | null } = {};
  if (body.name !== undefined) changes.name = requiredText('name', body.name, problems);
  if (body.footer !== undefined) {
    changes.footer = normalisedFooter(body.footer);
    const badFooter = footerProblem(changes.footer);
    if (badFooter) problems.push(badFooter);
  }
  if (problems.length > 0) throw invalidBody(problems);
  return changes;
}

/** A typed window's days are real calendar days (the validator checks their shape only), in order. */
function checkWindow(window: { starts_on: string; ends_on: string }): void {
  const problems: ErrorDetail[] = [];
  for (const end of ['starts_on', 'ends_on'] as const) {
    const day = new Date(`${window[end]}T00:00:00Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== window[end]) {
      problems.push({ location: 'body', field: `window.${end}`, rule: 'real_date', message: 'must be a real calendar date', value: window[end] });
    }
  }
  if (problems.length === 0 && window.ends_on < window.starts_on) {
    problems.push({ location: 'body', field: 'window.ends_on', rule: 'window_order', message: `must not be before window.starts_on (${window.starts_on})`, value: window.ends_on });
  }
  if (problems.length > 0) throw invalidBody(problems);
}

/** The 403 of an owner or admin who asks to relax the mode (a platform admin's decision). */
function relaxRefused(entityId: number, before: string, after: string): ApiError {
  return new ApiError(
    403,
    'forbidden',
    `Only a platform admin may relax the SMS compliance of entity ${entityId} from ${before} to ${after}: under ${after} a campaign that breaks the electoral rules is sent.`,
    [{ location: 'body', field: 'mode', rule: 'platform_admin_to_relax', message: `relaxes ${before} to ${after}: a platform admin's decision (enforce is the default)`, value: after }],
  );
}

/**
 * A typed window lies inside one legal propaganda span of the entity's election (issue 42; the spans of
 * every calendar election when it has none): 422 `outside_legal_window` naming the spans otherwise. A
 * window over a voting day never does (Lei 9.504/1997 art. 39 §5º).
 */
async function checkLegalWindow(compliance: Pick<SmsCompliance, 'legalSpans'>, entityId: number, window: { starts_on: string; ends_on: string }): Promise<void> {
  const { spans, contest } = await compliance.legalSpans(entityId);
  if (spanHolding(spans, window)) return;
  const of = contest ? `the election of entity ${entityId} (${contest.election.title}, by its ${contest.source})` : 'any election of the calendar (entity ' + entityId + ' has none of its own)';
  const listed = spans.length === 0 ? 'none is open' : spans.map((span) => `${span.starts_on} to ${span.ends_on}`).join(', or ');
  throw invalidBody([
    {
      location: 'body',
      field: 'window',
      rule: 'outside_legal_window',
      message: `must lie inside one legal propaganda span of ${of}: ${listed} (Lei 9.504/1997 arts. 36 and 39 §5º: no voting day is open)`,
      value: `${window.starts_on}..${window.ends_on}`,
    },
  ]);
}

function unknownCredential(id: number): ApiError {
  return notFound(`There is no SMS credential ${id} in your teams.`, [
    { location: 'path', field: 'credential_id', rule: 'existing_credential', message: 'must be the id of a credential of one of your teams', value: id },
  ]);
}

/** The stored settings as the history names their fields; an entity never set has the default mode and no window. */
function settingsFieldsOf(row: ComplianceRow | undefined): Record<string, unknown> {
  if (!row) return { mode: DEFAULT_MODE, window_starts_on: null, window_ends_on: null };
  const day = (value: unknown) => (value === null || value === undefined ? null : dateOnly(value));
  return { mode: row.mode, window_starts_on: day(row.window_starts_on), window_ends_on: day(row.window_ends_on) };
}

function settingsMessage(settings: SmsComplianceSettings): string {
  return `SMS compliance of entity ${settings.entity_id}: ${settings.mode}${settings.updated_at === null ? ' (the default)' : ''}.`;
}
