/**
 * Where a contact's consent came from, and which sources the law refuses (issue 42, section 5), shared
 * by the server (src/messaging/contact-handlers.ts, contact-import.ts, migration 0036) and the stateful
 * msw mock, so both refuse the same consent for the same words. Pure: no dependency.
 *
 * The law: electoral messages may go only to addresses registered free of charge with the candidate,
 * party or coalition (Lei 9.504/1997 art. 57-B III; Res. TSE 23.610/2019 arts. 28 III and 31), with the
 * person's consent (LGPD, Lei 13.709/2018 arts. 7 I and 8), and selling lists of addresses is banned
 * (Lei 9.504 art. 57-E §1º). So a consent whose kind, or whose words, say the list was bought or came
 * from a third party is refused (rule `consent_source_not_allowed`).
 *
 * What holds: a consent stored by the API has a kind (given, or read from its source's words by
 * `consentKindFromText`); `manual_with_evidence` and `import_with_proof` carry their evidence; the
 * refused kinds and words never reach a contact. The word lists are matched on text folded as people
 * type it (case, accents and runs of spaces aside).
 */

/** The kinds a consent may have; the last two exist so a front end can ask honestly, and are always refused. */
export const CONSENT_KINDS = ['form', 'event', 'inbound_message', 'manual_with_evidence', 'import_with_proof', 'purchased_list', 'third_party_list'] as const;
export type ConsentKind = (typeof CONSENT_KINDS)[number];

/** Kinds refused: the list was bought, or handed over by someone other than the person (art. 57-B III, 57-E §1º). */
export const REFUSED_CONSENT_KINDS: ReadonlySet<ConsentKind> = new Set(['purchased_list', 'third_party_list']);

/** Kinds whose consent must carry its evidence (the record that shows it: a protocol, a signed sheet, the file's proof). */
export const EVIDENCED_CONSENT_KINDS: ReadonlySet<ConsentKind> = new Set(['manual_with_evidence', 'import_with_proof']);

/** The longest evidence text kept. */
export const MAX_EVIDENCE_LENGTH = 2000;

/** Text folded for matching: NFD without accents, lower case, runs of spaces one. */
export function foldedText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Words that say a list was bought or came from a third party, on folded text. Word starts (`compr`)
 * cover the verb's forms: comprada, comprado, comprei, compramos, compra de lista.
 */
const THIRD_PARTY_WORDS: readonly RegExp[] = [
  /\bcompr(a|ad[ao]s?|ei|amos|aram|ou)\b/,
  /\badquirid[ao]s?\b/,
  /\badquiri(mos|u|ram)?\b/,
  /\bvendid[ao]s?\b/,
  /\b(de|da|do|por|com) terceir[ao]s?\b/,
  /\bterceirizad[ao]\b/,
  /\blista de terceir/,
  /\bparceir[ao]s?\b/,
  /\b(cedid|repassad|emprestad|fornecid|doad)[ao]s? (por|pel[ao]s?|de|da|do)\b/,
  /\bmailing\b/,
  /\bbase (comprada|alugada|de dados comprada|de terceiros)\b/,
  /\balugad[ao]s?\b/,
  /\b(bought|purchased|rented|leased|sold)\b/,
  /\bthird[- ]part(y|ies)\b/,
  /\bpartners?\b/,
  /\bdata ?broker/,
];

/** Whether a source's or an evidence's words say the list was bought or came from a third party. */
export function saysThirdParty(text: string | null | undefined): boolean {
  if (!text) return false;
  const folded = foldedText(text);
  return THIRD_PARTY_WORDS.some((words) => words.test(folded));
}

/** Words that name a kind, on folded text, first match wins; the refused kinds come first. */
const KIND_WORDS: ReadonlyArray<readonly [ConsentKind, RegExp]> = [
  ['inbound_message', /\b(sms|mensagem|mensagens|whatsapp|respondeu|resposta|inbound|palavra[- ]chave|keyword|torpedo)\b/],
  ['event', /\b(comicio|evento|event|reuniao|caminhada|carreata|plenaria|encontro|visita|panfletagem|ato|rally|meeting)\b/],
  ['form', /\b(formulario|form|ficha|fichas|site|website|pagina|landing|cadastro|inscricao|sign[- ]?up|qr ?code|abaixo[- ]assinado)\b/],
];

/**
 * The kind a free-text source names, if its words say it: a bought or third-party list first
 * (`purchased_list` or `third_party_list`), then an inbound message, an event, a form. Undefined when
 * the words name none (the caller must then say the kind). Never guesses the two kinds that need evidence.
 */
export function consentKindFromText(source: string | null | undefined): ConsentKind | undefined {
  if (!source) return undefined;
  if (saysThirdParty(source)) return /\b(compr|adquiri|vendid|alugad|bought|purchased|rented|sold)/.test(foldedText(source)) ? 'purchased_list' : 'third_party_list';
  const folded = foldedText(source);
  return KIND_WORDS.find(([, words]) => words.test(folded))?.[0];
}

/** One problem of a consent, as both sides report it (field relative to the consent: `kind`, `source`, `evidence`). */
export interface ConsentProblem {
  field: 'kind' | 'source' | 'evidence';
  rule: 'consent_source_not_allowed' | 'consent_kind_required' | 'consent_evidence_required';
  message: string;
  value?: string;
}

const NOT_ALLOWED =
  'must not be a bought list or one given by a third party: messages may go only to numbers given free of charge to the candidate, party or coalition (Lei 9.504/1997 art. 57-B III, art. 57-E §1º; Res. TSE 23.610/2019 arts. 28 III and 31)';

/**
 * The consent's kind (given, or read from `source`) and its problems: a refused kind or refusing words
 * in the source or the evidence (`consent_source_not_allowed`), no kind given nor readable
 * (`consent_kind_required`), a kind that needs evidence without it (`consent_evidence_required`).
 */
export function judgeConsent(consent: { kind?: string | null; source: string; evidence?: string | null }): { kind: ConsentKind | undefined; problems: ConsentProblem[] } {
  const problems: ConsentProblem[] = [];
  const given = consent.kind ?? undefined;
  const kind = (given as ConsentKind | undefined) ?? consentKindFromText(consent.source);
  if (given !== undefined && REFUSED_CONSENT_KINDS.has(given as ConsentKind)) problems.push({ field: 'kind', rule: 'consent_source_not_allowed', message: NOT_ALLOWED, value: given });
  if (saysThirdParty(consent.source)) problems.push({ field: 'source', rule: 'consent_source_not_allowed', message: `${NOT_ALLOWED}; its words say so`, value: consent.source });
  if (saysThirdParty(consent.evidence)) problems.push({ field: 'evidence', rule: 'consent_source_not_allowed', message: `${NOT_ALLOWED}; its words say so`, value: consent.evidence! });
  if (kind === undefined && consent.source.trim() !== '') {
    problems.push({ field: 'kind', rule: 'consent_kind_required', message: `must be given when the source's words name none of: ${CONSENT_KINDS.filter((one) => !REFUSED_CONSENT_KINDS.has(one)).join(', ')}` });
  }
  if (kind !== undefined && EVIDENCED_CONSENT_KINDS.has(kind) && !consent.evidence?.trim()) {
    problems.push({ field: 'evidence', rule: 'consent_evidence_required', message: `must be given for a consent of kind ${kind}: the record that shows it (a protocol, a signed sheet, where the proof is kept)` });
  }
  return { kind, problems };
}
