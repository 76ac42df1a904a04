/**
 * The electoral rules an SMS campaign is judged by in the stateful mock (src/messaging/compliance.ts):
 * each entity's mode (`enforce` unless set otherwise, issue 42), consent on record for every number, a
 * credential's footer naming an opt-out keyword, and the propaganda window of the election that judges
 * the entity (elections/calendar.ts). Judged under every mode; only `enforce` refuses.
 */
import { REFUSED_CONSENT_KINDS, type ConsentKind } from '@palanque/rules/consent-sources';
import type { ErrorDetail } from '../../msw-validation.js';
import type { components } from '../../schema.js';
import { mockCalendarOf, mockEffectiveWindow, mockWindowWarnings } from '../elections/calendar.js';
import type { ComplianceWarning, State, StoredCompliance, StoredEntity } from '../store.js';
import { OPT_OUT_KEYWORDS } from './opt-outs.js';
import { maskPhone } from './phones.js';

type EffectiveWindow = components['schemas']['SmsEffectiveWindow'];

/** A footer as stored (trimmed, null when empty), or the server's 422 detail when it names no opt-out keyword. */
export function footerOf(value: unknown): { footer: string | null } | { problem: ErrorDetail } {
  const footer = typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
  const words = (footer ?? '').split(/\s+/).map((word) => word.normalize('NFKD').replace(/[\p{M}\p{P}\p{S}\p{Cf}]/gu, '').toUpperCase());
  if (footer === null || words.some((word) => OPT_OUT_KEYWORDS.has(word))) return { footer };
  return { problem: { location: 'body', field: 'footer', rule: 'opt_out_keyword', message: 'must name an opt-out keyword people can reply (PARAR, PARE, SAIR, CANCELAR, DESCADASTRAR, STOP...)', value: footer.slice(0, 60) } };
}

/** Today in Brasília, YYYY-MM-DD. */
export const brasiliaDay = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

/** The window the rule judges by: the spans of the election that judges the entity, narrowed to the typed one (elections/calendar.ts). */
function effectiveWindowOf(state: State, entity: StoredEntity, typed: StoredCompliance['window']): EffectiveWindow | null {
  return mockEffectiveWindow(state.court, mockCalendarOf(state), entity.record, typed, brasiliaDay());
}

export function complianceOf(state: State, entity: StoredEntity) {
  const stored = state.compliance.get(entity.id);
  const window = stored?.window ?? null;
  return { entity_id: entity.id, mode: stored?.mode ?? 'enforce', window, effective_window: effectiveWindowOf(state, entity, window), updated_at: stored?.updated_at ?? null, updated_by: stored?.updated_by ?? null };
}

/** The rules a campaign breaks under its entity's mode (nothing for a credential without an entity). */
export function judgeCampaign(state: State, credential: { id: number; entity_id: number | null; footer?: unknown }, numbers: string[], nonElectoral = false): { mode: StoredCompliance['mode']; warnings: ComplianceWarning[] } {
  const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
  if (!entity) return { mode: 'off', warnings: [] };
  const settings = complianceOf(state, entity);
  // Judged under `off` too, never refused there (issue 42); a campaign declared non-electoral (art. 36-A) is not judged by the window.
  const warnings: ComplianceWarning[] = [];
  const consented = new Set(
    [...state.contacts.values()].filter((contact) => contact.entity_id === entity.id && contact.consent && !REFUSED_CONSENT_KINDS.has(contact.consent.kind as ConsentKind)).map((contact) => contact.phone),
  );
  const missing = numbers.filter((number) => !consented.has(number));
  if (missing.length > 0) {
    const examples = missing.slice(0, 5).map(maskPhone);
    const [have, contacts] = missing.length === 1 ? ['has', 'a contact'] : ['have', 'contacts'];
    warnings.push({ rule: 'consent_missing', message: `${missing.length} of ${numbers.length} numbers ${have} no consent on record as ${contacts} of entity ${entity.id}: ${examples.join(', ')}${missing.length > 5 ? ', ...' : ''}`, numbers: missing.length, examples });
  }
  if (!credential.footer) warnings.push({ rule: 'footer_missing', message: `credential ${credential.id} has no footer identifying the sender and offering a way out (updateSmsCredential sets one)` });
  // The window as spans, and the election being over (issue 42), as compliance.ts judges them.
  warnings.push(...mockWindowWarnings(state.court, mockCalendarOf(state), entity.id, entity.record, settings.window, brasiliaDay(), nonElectoral));
  return { mode: settings.mode, warnings };
}

/** The rules a judgement names as 422 details (compliance.ts's refusalDetails): the audience's field for consent, the credential's for the others. */
export function complianceDetails(warnings: readonly ComplianceWarning[], field: string, credentialId: number): ErrorDetail[] {
  return warnings.map((warning) => ({
    location: 'body' as const,
    field: warning.rule === 'consent_missing' ? field : 'credencial',
    rule: warning.rule,
    message: warning.message,
    value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : warning.rule === 'election_over' ? warning.last_vote_on : credentialId,
  }));
}
