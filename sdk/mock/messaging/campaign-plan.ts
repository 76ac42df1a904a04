/**
 * A campaign request read into what it sends (src/messaging/campaign-plan.ts, simplified), shared by the
 * send and its preview: the credential and the caller's right to send with it, a declared deepfake
 * refused, the audience (a pasted list or the entity's contacts by tag) with the numbers an SMS cannot
 * reach and those that opted out left out, the footer, the encoding and segments, and the compliance
 * judgement.
 */
import { deepfakeProblem, labelProblem, type SyntheticContent } from '@palanque/rules/synthetic-content';
import { forbidden, invalidBody, notFound } from '../answers.js';
import { may, roleIn, type Context } from '../auth.js';
import { chatOf } from '../chat/inbox.js';
import type { State } from '../store.js';
import { complianceDetails, judgeCampaign } from './compliance.js';
import { contactTag } from './contacts.js';
import { isBrazilianMobile, listedNumbers, maskPhone } from './phones.js';

/** The characters of the GSM-7 alphabet (basic set and its extension), as a campaign's encoding is judged. */
const GSM_7 = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà^{}\\[~\]|€]*$/;

/** A message's encoding and segments, as the server counts them (sms-segments-calculator, simplified). */
export function campaignText(text: string): { encoding: 'GSM-7' | 'UCS-2'; segments: number } {
  const gsm = GSM_7.test(text);
  const length = gsm ? [...text].reduce((sum, char) => sum + ('^{}\\[~]|€'.includes(char) ? 2 : 1), 0) : text.length;
  const [single, multi] = gsm ? [160, 153] : [70, 67];
  return { encoding: gsm ? 'GSM-7' : 'UCS-2', segments: length <= single ? 1 : Math.ceil(length / multi) };
}

/** A campaign request read as the server's campaign-plan.ts reads it (simplified), or its error answer. */
interface CampaignPlan {
  credential: State['credentials'] extends Map<number, infer Credential> ? Credential : never;
  /** Distinct numbers, in order. */
  numbers: string[];
  /** The contact of each number, for a campaign to contacts. */
  contactIds: Map<string, number>;
  rejected: number;
  /** Distinct numbers left out because an SMS cannot reach them (issue 42, isBrazilianMobile), in order. */
  notMobile: string[];
  /** Distinct numbers left out because they opted out of the entity's campaigns (opt-outs.ts). */
  optedOutSkipped: number;
  footer: string | null;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  judgement: ReturnType<typeof judgeCampaign>;
  /** The synthetic content declared (packages/rules/src/synthetic-content.ts); null: none. */
  syntheticContent: { technology: string } | null;
  /** Its declaration that it is not electoral propaganda (art. 36-A), trimmed; null: none. */
  nonElectoral: string | null;
}

/** `everyRule` (the preview): a 422 of the body names the compliance rules broken beside its problems, whatever the mode. */
export function campaignPlanOf({ body, user, state }: Context, everyRule = false): CampaignPlan | Response {
  const credential = state.credentials.get(Number(body.credencial));
  if (!credential) {
    return notFound(`There is no SMS credential ${String(body.credencial)}.`, [{ location: 'body', field: 'credencial', rule: 'existing_credential', message: 'must be the id of a credential', value: body.credencial as number }]);
  }
  const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
  const role = entity && roleIn(entity, user);
  if (!user.is_admin && !(role && may(user, role, 'edit'))) return forbidden(`You may not send with credential ${credential.id}.`);
  const mensagem = body.mensagem as { recipient_list_str?: string; contatos?: { tags?: string[] }; mensagem: string };
  // A declared deepfake is refused under every mode (Res. TSE 23.610/2019 art. 9-C §1º), as the server does.
  const declared = body.synthetic_content as SyntheticContent | undefined;
  const deepfake = deepfakeProblem(declared);
  if (deepfake) return invalidBody([{ location: 'body', ...deepfake }]);
  if ((mensagem.recipient_list_str === undefined) === (mensagem.contatos === undefined)) {
    return invalidBody([
      mensagem.contatos === undefined
        ? { location: 'body', field: 'mensagem.recipient_list_str', rule: 'required', message: 'is required unless mensagem.contatos is given' }
        : { location: 'body', field: 'mensagem.contatos', rule: 'one_audience', message: 'give either mensagem.recipient_list_str or mensagem.contatos, not both' },
    ]);
  }
  let numbers: string[];
  // Repeats the list held (one number written twice), dropped and counted as `rejected`, as the server counts them.
  let repeated = 0;
  const contactIds = new Map<string, number>();
  if (mensagem.contatos) {
    if (!entity) return invalidBody([{ location: 'body', field: 'mensagem.contatos', rule: 'entity_credential', message: `contacts belong to an entity; credential ${credential.id} has none`, value: credential.id }]);
    const tags = (mensagem.contatos.tags ?? []).map(contactTag);
    const chosen = [...state.contacts.values()].filter((contact) => contact.entity_id === entity.id && (tags.length === 0 || contact.tags.some((tag) => tags.includes(tag))));
    if (chosen.length === 0) return invalidBody([{ location: 'body', field: 'mensagem.contatos', rule: 'not_blank', message: `chooses nobody: entity ${entity.id} has no such contacts` }]);
    for (const contact of chosen.sort((a, b) => a.id - b.id)) contactIds.set(contact.phone, contact.id);
    numbers = [...contactIds.keys()];
  } else {
    const listed = listedNumbers(mensagem.recipient_list_str!);
    if (listed.problems.length > 0) {
      // Every problem at once (issue 42): the compliance rules its valid numbers break, beside the body's problems.
      const judged = judgeCampaign(state, credential, [...new Set(listed.numbers)], typeof body.declaracao_nao_eleitoral === 'string');
      const named = everyRule ? complianceDetails(judged.warnings, 'mensagem.recipient_list_str', credential.id) : [];
      return invalidBody([...listed.problems, ...named]);
    }
    numbers = listed.numbers;
    repeated = listed.repeated;
  }
  const listed = [...new Set(numbers)];
  // Only Brazilian mobiles receive SMS (issue 42): the others are skipped and named; none left is 422, as the server answers.
  const notMobile = listed.filter((number) => !isBrazilianMobile(number));
  const distinct = listed.filter(isBrazilianMobile);
  if (distinct.length === 0) {
    const field = mensagem.contatos ? 'mensagem.contatos' : 'mensagem.recipient_list_str';
    const examples = notMobile.slice(0, 5).map(maskPhone).join(', ');
    const message = `holds no Brazilian mobile number, the only numbers an SMS reaches: ${notMobile.length} landline, toll-free or foreign number${notMobile.length === 1 ? '' : 's'} (${examples}${notMobile.length > 5 ? ', ...' : ''})`;
    return invalidBody([{ location: 'body', field, rule: 'not_mobile', message, value: notMobile.length }]);
  }
  const footer = (credential.footer as string | null | undefined) ?? null;
  const text = footer ? `${mensagem.mensagem.trim()}\n${footer}` : mensagem.mensagem.trim();
  const nonElectoral = typeof body.declaracao_nao_eleitoral === 'string' ? body.declaracao_nao_eleitoral.trim() : null;
  if (nonElectoral === '') return invalidBody([{ location: 'body', field: 'declaracao_nao_eleitoral', rule: 'not_blank', message: 'must not be blank' }]);
  // Numbers that opted out of the entity's campaigns (a reply, by hand, a conversation; kept through an erasure) are skipped and counted.
  const optedOut = chatOf(state).optedOut;
  const sendable = credential.entity_id === null ? distinct : distinct.filter((number) => !optedOut.has(`${credential.entity_id}:${number}`));
  const judgement = judgeCampaign(state, credential, sendable, nonElectoral !== null);
  // The label of declared synthetic content (art. 9-B) is one more rule, judged wherever the others are.
  const unlabelled = entity === undefined ? undefined : labelProblem(declared, mensagem.mensagem.trim());
  if (unlabelled) judgement.warnings.push({ rule: 'synthetic_content_label', message: unlabelled.message, technology: String(unlabelled.value) });
  const syntheticContent = declared ? { technology: declared.technology.trim() } : null;
  return { credential, numbers: sendable, optedOutSkipped: distinct.length - sendable.length, contactIds, rejected: repeated + numbers.length - listed.length, notMobile, footer, text, ...campaignText(text), judgement, syntheticContent, nonElectoral };
}
