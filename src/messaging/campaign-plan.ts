/**
 * A campaign request read into what it would send (issue 23), shared by sendSmsCampaign, which sends it,
 * and previewSmsCampaign, which only shows it: what a preview shows is what the send does.
 *
 * What holds:
 * - The recipients are the numbers of `mensagem.recipient_list_str` (@palanque/rules/recipients reads them) or the
 *   contacts of the credential's entity (`mensagem.contatos`: all, or those with any of the tags,
 *   normalised as contacts.ts stores them), never both; numbers that opted out of the entity's
 *   campaigns are left out and counted; so are numbers that cannot receive an SMS (landlines, toll-free,
 *   foreign numbers: only Brazilian mobiles can, @palanque/rules/phones), counted and the first few named, masked
 *   (rule `not_mobile`; a list or audience with no mobile number left is 422).
 * - Every problem of the body is gathered into one 422 naming each field; nothing is read from the
 *   database before the cheap checks (the list's size is capped before any number is read).
 * - The text is the body and the credential's footer (models.ts's messageText), counted in segments
 *   as the provider will bill it; at most 1,600 characters with the footer.
 * - The judgement is made on the numbers that would be sent to, under the mode of the credential's
 *   entity, as it is when the plan is made. A campaign declared non-electoral
 *   (`declaracao_nao_eleitoral`: it asks for no vote, Lei 9.504/1997 art. 36-A) is not judged by the
 *   window rule; its declaration goes with the plan, to be kept with the campaign.
 * - Every problem at once (issue 42): a preview's 422 of the body also names the compliance rules what
 *   could be read of it breaks (window, consent of its valid numbers, footer), whatever the mode, so a
 *   front end shows them together. A send's 422 of the body names the body's problems only, as before.
 * - A campaign declaring synthetic content (`synthetic_content`, issue 42: packages/rules/src/synthetic-content.ts) is
 *   a 422 under every mode when it declares a deepfake (Res. TSE 23.610/2019 art. 9-C §1º), and its
 *   message without the label is one more rule of its judgement (`synthetic_content_label`, art. 9-B),
 *   judged as the others (refused under `enforce` only; not judged for a credential without an entity).
 */
import { QueryTypes, type Sequelize } from 'sequelize';
import { SegmentedMessage } from 'sms-segments-calculator';
import { REFUSED_CONSENT_KINDS, type ConsentKind } from '@palanque/rules/consent-sources';
import type { components } from '../../sdk/schema.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import type { ErrorDetail } from '../http/errors.js';
import { refusalDetails, type Judgement, type SmsCompliance } from './compliance.js';
import { normalisedTag } from './contacts.js';
import { messageText, type CredentialRow } from './models.js';
import type { SmsOptOuts } from './opt-outs.js';
import { maskPhone, isBrazilianMobile } from '@palanque/rules/phones';
import { countPieces, readRecipients, recipientListProblems } from '@palanque/rules/recipients';
import { deepfakeProblem, labelProblem } from '@palanque/rules/synthetic-content';

type CampaignRequest = components['schemas']['SmsCampaignRequest'];

/** The longest message, its footer included (the contract's `maxLength` of `mensagem.mensagem`). */
const MAX_TEXT_LENGTH = 1600;
const LIST_FIELD = 'mensagem.recipient_list_str';
const CONTACTS_FIELD = 'mensagem.contatos';

export interface Recipient {
  /** E.164. */
  phone: string;
  /** The entity's contact, for a campaign to contacts. */
  contactId: number | null;
}

export interface CampaignPlan {
  titulo: string;
  /** The message as written, without the footer. */
  body: string;
  footer: string | null;
  /** What each message says: the body and the footer. */
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  /** Who it goes to, in order, opted-out numbers left out. */
  recipients: Recipient[];
  /** Entries of the list that repeat an earlier number. */
  rejected: number;
  optedOutSkipped: number;
  /** Numbers left out because they are not Brazilian mobiles (rule `not_mobile`, @palanque/rules/phones), and the first of them, masked. */
  notMobileSkipped: number;
  notMobileExamples: string[];
  /** `{ tags }` for a campaign to contacts (no tags: all of them); null for a list. */
  audience: { tags: string[] } | null;
  /** The body field that named the recipients, for the details of an error about them. */
  audienceField: typeof LIST_FIELD | typeof CONTACTS_FIELD;
  judgement: Judgement;
  /** The text of its declaration that it is not electoral propaganda (art. 36-A), trimmed; null: none. */
  nonElectoral: string | null;
  /** The synthetic content the request declared (issue 42); null: none. */
  syntheticContent: { technology: string } | null;
}

export interface PlanDependencies {
  sequelize: Sequelize;
  optOuts: SmsOptOuts;
  compliance: SmsCompliance;
  /** SMS_MAX_RECIPIENTS. */
  maxRecipients: number;
}

/** Reads a campaign request for `credential` into its plan; throws a 422 naming every problem of the body. */
export async function planCampaign(
  { sequelize, optOuts, compliance, maxRecipients }: PlanDependencies,
  credential: CredentialRow,
  request: CampaignRequest,
  /** A preview's 422 names the compliance rules broken beside the body's problems, whatever the mode. */
  { everyRule = false }: { everyRule?: boolean } = {},
): Promise<CampaignPlan> {
  const problems: ErrorDetail[] = [];
  const titulo = requiredText('titulo', request.titulo, problems);
  const nonElectoral = request.declaracao_nao_eleitoral === undefined ? null : requiredText('declaracao_nao_eleitoral', request.declaracao_nao_eleitoral, problems);
  const body = requiredText('mensagem.mensagem', request.mensagem.mensagem, problems);
  const footer = credential.footer;
  const text = messageText(body, footer);
  if (footer !== null && text.length > MAX_TEXT_LENGTH) {
    problems.push({
      location: 'body',
      field: 'mensagem.mensagem',
      rule: 'max_length_with_footer',
      message: `is ${body.length} characters; with the credential's footer (${footer.length + 1}) a message may have ${MAX_TEXT_LENGTH - footer.length - 1} at most`,
      value: body.length,
    });
  }
  const declared = request.synthetic_content;
  const deepfake = deepfakeProblem(declared);
  if (deepfake) problems.push({ location: 'body', ...deepfake });
  const { recipient_list_str: list, contatos } = request.mensagem;
  let chosen: { numbers: string[]; rejected: number; contacts?: Map<string, { id: number; consented: boolean }> } | undefined;
  if (list !== undefined && contatos !== undefined) {
    problems.push({ location: 'body', field: CONTACTS_FIELD, rule: 'one_audience', message: `give either ${LIST_FIELD} or ${CONTACTS_FIELD}, not both` });
  } else if (list === undefined && contatos === undefined) {
    problems.push({ location: 'body', field: LIST_FIELD, rule: 'required', message: `is required unless ${CONTACTS_FIELD} is given` });
  } else if (list !== undefined) {
    chosen = readList(list, maxRecipients, problems);
  } else {
    chosen = await readContacts(sequelize, credential, contatos!.tags ?? [], maxRecipients, problems);
  }
  const notMobile = chosen ? withoutNotMobile(chosen, chosen.contacts ? CONTACTS_FIELD : LIST_FIELD, problems) : [];
  if (problems.length > 0 || !chosen) {
    const audienceField = contatos !== undefined && list === undefined ? CONTACTS_FIELD : LIST_FIELD;
    const judged = { optOuts, compliance, credential, footer, nonElectoral: nonElectoral !== null, audienceField };
    // A preview names the label of declared synthetic content too (issue 42), as its warnings would.
    const unlabelledBody = everyRule && credential.entity_id !== null ? labelProblem(declared, body) : undefined;
    const labelDetails: ErrorDetail[] = unlabelledBody ? [{ location: 'body', ...unlabelledBody }] : [];
    throw invalidBody([...problems, ...(everyRule ? [...(await complianceProblems(judged, chosen)), ...labelDetails] : [])]);
  }

  const optedOut = await optOuts.among(credential.entity_id, chosen.numbers);
  const numbers = chosen.numbers.filter((number) => !optedOut.has(number));
  const contacts = chosen.contacts;
  const consented = contacts ? new Set(numbers.filter((number) => contacts.get(number)?.consented)) : undefined;
  const judged = await compliance.judge({ entityId: credential.entity_id, credentialId: credential.id, footer, numbers, consented, nonElectoral: nonElectoral !== null });
  // The label of declared synthetic content (art. 9-B) is one more rule, judged wherever the others are.
  const unlabelled = credential.entity_id === null ? undefined : labelProblem(declared, body);
  const judgement: Judgement = unlabelled
    ? { ...judged, warnings: [...judged.warnings, { rule: 'synthetic_content_label', message: unlabelled.message, technology: String(unlabelled.value) }] }
    : judged;
  const segmented = new SegmentedMessage(text, 'auto');
  return {
    titulo,
    body,
    footer,
    text,
    encoding: segmented.encodingName === 'UCS-2' ? 'UCS-2' : 'GSM-7',
    segments: segmented.segmentsCount,
    recipients: numbers.map((phone) => ({ phone, contactId: contacts?.get(phone)?.id ?? null })),
    rejected: chosen.rejected,
    optedOutSkipped: chosen.numbers.length - numbers.length,
    notMobileSkipped: notMobile.length,
    notMobileExamples: notMobile.slice(0, NOT_MOBILE_EXAMPLES).map(maskPhone),
    audience: contacts ? { tags: normalisedTags(contatos?.tags ?? []) } : null,
    audienceField: contacts ? CONTACTS_FIELD : LIST_FIELD,
    judgement,
    nonElectoral,
    syntheticContent: declared ? { technology: declared.technology.trim() } : null,
  };
}

/**
 * The compliance rules a previewed campaign whose body has problems breaks, as 422 details beside them
 * (whatever the mode): judged on what could be read, its valid numbers less the opted-out (none when
 * no audience was read).
 */
async function complianceProblems(
  judged: { optOuts: SmsOptOuts; compliance: SmsCompliance; credential: CredentialRow; footer: string | null; nonElectoral: boolean; audienceField: string },
  chosen: { numbers: string[]; contacts?: Map<string, { id: number; consented: boolean }> } | undefined,
): Promise<ErrorDetail[]> {
  const { optOuts, compliance, credential, footer, nonElectoral, audienceField } = judged;
  if (credential.entity_id === null) return [];
  const optedOut = await optOuts.among(credential.entity_id, chosen?.numbers ?? []);
  const numbers = (chosen?.numbers ?? []).filter((number) => !optedOut.has(number));
  const contacts = chosen?.contacts;
  const consented = contacts ? new Set(numbers.filter((number) => contacts.get(number)?.consented)) : undefined;
  const { warnings } = await compliance.judge({ entityId: credential.entity_id, credentialId: credential.id, footer, numbers, consented, nonElectoral });
  return refusalDetails(warnings, audienceField, credential.id);
}

/** How many of the numbers skipped as not mobile a preview and a report name (masked); all are counted. */
const NOT_MOBILE_EXAMPLES = 5;

/**
 * Leaves in `chosen` only the numbers that can receive an SMS, Brazilian mobiles (@palanque/rules/phones), and
 * returns the others in order: a landline, a toll-free or a foreign number is skipped and reported
 * (`not_mobile`), as an opted-out one is, never sent to and never billed. A list or an audience with no
 * mobile number left is a problem of the body (422 `not_mobile`, its value how many were skipped).
 */
function withoutNotMobile(chosen: { numbers: string[] }, field: string, problems: ErrorDetail[]): string[] {
  const notMobile = chosen.numbers.filter((number) => !isBrazilianMobile(number));
  if (notMobile.length === 0) return notMobile;
  chosen.numbers = chosen.numbers.filter((number) => isBrazilianMobile(number));
  if (chosen.numbers.length === 0) {
    const examples = notMobile.slice(0, NOT_MOBILE_EXAMPLES).map(maskPhone).join(', ');
    problems.push({
      location: 'body',
      field,
      rule: 'not_mobile',
      message: `holds no Brazilian mobile number, the only numbers an SMS reaches: ${notMobile.length} landline, toll-free or foreign number${notMobile.length === 1 ? '' : 's'} (${examples}${notMobile.length > NOT_MOBILE_EXAMPLES ? ', ...' : ''})`,
      value: notMobile.length,
    });
  }
  return notMobile;
}

/** The detail of a campaign over the cap (SMS_MAX_RECIPIENTS). */
function overCap(field: string, count: number, message: string): ErrorDetail {
  return { location: 'body', field, rule: 'max_recipients', message, value: count };
}

/**
 * The usual list (one number per line or between commas) is counted before any number is read, reading
 * being the work the cap bounds; numbers sharing a line are counted once found.
 */
function readList(list: string, maxRecipients: number, problems: ErrorDetail[]): { numbers: string[]; rejected: number } | undefined {
  const listing = (count: number) => overCap(LIST_FIELD, count, `lists ${count} numbers; a campaign takes at most ${maxRecipients} (send the rest as another campaign)`);
  const pieces = countPieces(list);
  if (pieces > maxRecipients) throw invalidBody([listing(pieces)]);
  const recipients = readRecipients(list);
  if (recipients.entries > maxRecipients) throw invalidBody([listing(recipients.entries)]);
  problems.push(...recipientListProblems(recipients, LIST_FIELD));
  return { numbers: recipients.numbers, rejected: recipients.repeated };
}

/** The contacts of the credential's entity with any of `tags` (all without tags), by id, with their consent. */
async function readContacts(
  sequelize: Sequelize,
  credential: CredentialRow,
  tags: readonly string[],
  maxRecipients: number,
  problems: ErrorDetail[],
): Promise<{ numbers: string[]; rejected: number; contacts: Map<string, { id: number; consented: boolean }> } | undefined> {
  if (credential.entity_id === null) {
    problems.push({ location: 'body', field: CONTACTS_FIELD, rule: 'entity_credential', message: `contacts belong to an entity; credential ${credential.id} has none`, value: credential.id });
    return undefined;
  }
  const wanted = normalisedTags(tags);
  const filter = wanted.length === 0 ? '' : 'AND EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag IN (:tags))';
  // One more than the cap: enough to know the cap is passed without reading every contact.
  const rows = await sequelize.query<{ id: number; phone: string; consent_source: string | null; consent_kind: string | null }>(
    `SELECT c.id, c.phone, c.consent_source, c.consent_kind FROM contacts c WHERE c.entity_id = :entityId ${filter} ORDER BY c.id LIMIT :limit`,
    { type: QueryTypes.SELECT, replacements: { entityId: credential.entity_id, tags: wanted, limit: maxRecipients + 1 } },
  );
  const which = wanted.length === 0 ? `entity ${credential.entity_id} has no contacts` : `no contact of entity ${credential.entity_id} has the tags ${wanted.join(', ')}`;
  if (rows.length === 0) {
    problems.push({ location: 'body', field: CONTACTS_FIELD, rule: 'not_blank', message: `chooses nobody: ${which}`, ...(wanted.length > 0 ? { value: wanted } : {}) });
    return undefined;
  }
  if (rows.length > maxRecipients) {
    const [counted] = await sequelize.query<{ total: number | string }>(`SELECT COUNT(*) AS total FROM contacts c WHERE c.entity_id = :entityId ${filter}`, {
      type: QueryTypes.SELECT,
      replacements: { entityId: credential.entity_id, tags: wanted },
    });
    const total = Number(counted?.total ?? rows.length);
    problems.push(overCap(CONTACTS_FIELD, total, `chooses ${total} contacts; a campaign takes at most ${maxRecipients} (choose fewer by their tags)`));
    return undefined;
  }
  const contacts = new Map(rows.map((row) => [row.phone, { id: Number(row.id), consented: row.consent_source !== null && !REFUSED_CONSENT_KINDS.has(row.consent_kind as ConsentKind) }]));
  return { numbers: rows.map((row) => row.phone), rejected: 0, contacts };
}

/** Tags as contacts.ts stores them, each once, in the order given. */
function normalisedTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map(normalisedTag).filter((tag) => tag !== ''))];
}
