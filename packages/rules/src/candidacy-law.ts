/**
 * Candidacies the electoral court would refuse (issue 42, section 6): the rules of the law on a candidate
 * entity that need no database, shared by the server (src/entities/candidacy-law.ts, which finds the
 * office, the election and the federations) and the stateful msw mock, so that both refuse the same body
 * with the same details.
 *
 * What holds:
 * - The offices, their minimum ages, their scope, whether they exist in the Federal District and whether
 *   they are proportional come from the law (OFFICES_BY_LAW), not from imported data: an install without
 *   the court's tables judges the same way.
 * - Each rule judges only what it knows: an office that neither a linked candidacy nor `position` names,
 *   a `tipoDisputa` that is not a scope word, an election without dates, leave their rule unjudged.
 * - Each broken rule is one detail naming the field, the rule (`ballot_name_length`, `office_scope`,
 *   `proportional_coalition`, `minimum_age`), the legal source and the offending value.
 */
import type { ErrorDetail } from './error-detail.js';

/**
 * The fields of a candidate entity (the contract's `CandidateEntity`) these rules read, as the contract
 * types them (a state is one of its `UF` codes, read here as text); test/rules-package.test.ts holds the
 * contract's type to it, so that a renamed or retyped field fails the type check.
 */
export interface CandidacyFields {
  nm_urna?: string | null;
  position?: string | null;
  candidacy_id?: number | null;
  tipoDisputa?: string | null;
  uf?: string | null;
  estado_disputa?: string | null;
  partidosLegenda?: string[] | null;
  partido?: string | null;
  data_nascimento?: string | null;
  disputa_eleitoral?: number | null;
}

/** A ballot name has at most this many characters, spaces included (Res. TSE 23.609/2019 art. 25, as amended by Res. 23.675/2021; Lei 9.504/1997 art. 12). */
export const BALLOT_NAME_LIMIT = 30;

/** Where an office is disputed: a municipality, a state (or the Federal District), the whole country. */
export type OfficeScope = 'municipal' | 'state' | 'national';

/** An elective office as the law defines it, by the court's office code (CD_CARGO). */
export interface LawOffice {
  cd_cargo: number;
  /** The court's name (DS_CARGO). */
  name: string;
  /** CF art. 14 §3º VI. */
  minimumAge: number;
  /** Lei 9.504/1997 art. 11 §2º: at inauguration, except the age of 18, at the registration deadline. */
  ageMeasuredAt: 'registration_deadline' | 'inauguration';
  scope: OfficeScope;
  /** Whether the Federal District has it: only there (deputado distrital), never there (no municipalities, CF art. 32), or both. */
  federalDistrict: 'only' | 'never' | 'also';
  /** Elected by proportional representation: no coalitions since 2020 (CF art. 17 §1º, EC 97/2017). */
  proportional: boolean;
}

const office = (cd_cargo: number, name: string, minimumAge: number, scope: OfficeScope, federalDistrict: LawOffice['federalDistrict'], proportional = false): LawOffice => ({
  cd_cargo,
  name,
  minimumAge,
  ageMeasuredAt: minimumAge === 18 ? 'registration_deadline' : 'inauguration',
  scope,
  federalDistrict,
  proportional,
});

/**
 * The elective offices (CF arts. 14 §3º VI, 27, 28, 29, 32, 45, 46, 76, 77), by the court's office codes.
 * Ages: 35 president, vice and senator (a); 30 governor and vice (b); 21 deputies, mayor and vice-mayor
 * (c); 18 councillor (d).
 */
export const OFFICES_BY_LAW: ReadonlyMap<number, LawOffice> = new Map(
  [
    office(1, 'PRESIDENTE', 35, 'national', 'also'),
    office(2, 'VICE-PRESIDENTE', 35, 'national', 'also'),
    office(3, 'GOVERNADOR', 30, 'state', 'also'),
    office(4, 'VICE-GOVERNADOR', 30, 'state', 'also'),
    office(5, 'SENADOR', 35, 'state', 'also'),
    office(6, 'DEPUTADO FEDERAL', 21, 'state', 'also', true),
    // The Federal District elects deputados distritais, not estaduais (CF art. 32 §3º).
    office(7, 'DEPUTADO ESTADUAL', 21, 'state', 'never', true),
    office(8, 'DEPUTADO DISTRITAL', 21, 'state', 'only', true),
    office(11, 'PREFEITO', 21, 'municipal', 'never'),
    office(12, 'VICE-PREFEITO', 21, 'municipal', 'never'),
    office(13, 'VEREADOR', 18, 'municipal', 'never', true),
  ].map((entry) => [entry.cd_cargo, entry]),
);

/** Letters and digits in lower case without accents, one space between words ("Vice-Prefeita" -> "vice prefeita"). */
export function plainWords(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .replace(/['\u2019\u2018`\u00b4]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .toLowerCase();
}

/** The words of a feminine office name that the court writes in the masculine. */
export const FEMININE_FORMS: ReadonlyMap<string, string> = new Map([
  ['prefeita', 'prefeito'],
  ['vereadora', 'vereador'],
  ['governadora', 'governador'],
  ['senadora', 'senador'],
  ['deputada', 'deputado'],
  ['presidenta', 'presidente'],
]);

const OFFICE_BY_WORDS: ReadonlyMap<string, LawOffice> = new Map([...OFFICES_BY_LAW.values()].map((entry) => [plainWords(entry.name), entry]));

/** The office `position` names, case, accents, hyphens and feminine forms aside ("Vice-Prefeita", "deputada federal"). */
export function officeOfPosition(position: string | null | undefined): LawOffice | undefined {
  if (!position) return undefined;
  const words = plainWords(position)
    .split(' ')
    .map((word) => FEMININE_FORMS.get(word) ?? word)
    .join(' ');
  return OFFICE_BY_WORDS.get(words);
}

/** A party acronym compared without accents, case or spaces ("PC do B" and "PCdoB" are one party). */
export function acronymKey(acronym: string): string {
  return acronym.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/\s+/g, '').toUpperCase();
}

/** A federation of parties (Lei 9.096/1995 art. 11-A, from Lei 14.208/2021): one party for its term. */
export interface Federation {
  name: string;
  /** Its parties' acronyms as written. */
  parties: string[];
}

/**
 * The federations registered with the TSE in May 2022 for at least four years (Lei 9.096 art. 11-A
 * §3º II), which ran in the 2022 and 2024 elections (the court's 2022 and 2024 candidacy files name them;
 * fixtures/elections.json carries them as the court writes them). Used when the court's tables of the
 * election are not loaded; a federation registered later is known only from the court's tables.
 */
export const FEDERATIONS_2022: readonly Federation[] = [
  { name: 'Federação Brasil da Esperança - FE BRASIL', parties: ['PT', 'PCdoB', 'PV'] },
  { name: 'Federação PSDB Cidadania', parties: ['PSDB', 'CIDADANIA'] },
  { name: 'Federação PSOL REDE', parties: ['PSOL', 'REDE'] },
];

/** Federations exist from the 2022 elections (Lei 14.208/2021); proportional coalitions end with 2020's (EC 97/2017 art. 2º). */
export const FIRST_YEAR_OF_FEDERATIONS = 2022;
export const FIRST_YEAR_WITHOUT_PROPORTIONAL_COALITIONS = 2020;

/** What the rules know of the entity's election; every part optional. */
export interface ElectionFacts {
  /** For messages: "Eleições Municipais 2028". */
  title?: string;
  year?: number;
  /** The day the law measures the office's minimum age (registration deadline or inauguration), YYYY-MM-DD. */
  ageMeasuredOn?: string;
  /** The federations running in it; the 2022 registrations when not given. */
  federations?: readonly Federation[];
  /** The acronym of the entity's party (`partido` is its number), when known. */
  partyAcronym?: string;
}

export interface CandidacyLawInput {
  /** The fields the body sends (nulls left out). */
  sent: Partial<CandidacyFields>;
  /** The entity as it will be: the stored one with the body applied (nulls left out). */
  after: Partial<CandidacyFields>;
  /** The office: the linked candidacy's, else `position`'s. */
  office?: LawOffice;
  /** Where the office came from, for messages ("position prefeito", "candidacy 501"). */
  officeSource?: string;
  election?: ElectionFacts;
}

const problem = (field: string, rule: string, message: string, value?: ErrorDetail['value']): ErrorDetail => ({
  location: 'body',
  field,
  rule,
  message,
  ...(value === undefined ? {} : { value }),
});

/** The fields each rule reads: a rule judges a body that sends one of them, on the entity as it will be. */
export const RULE_FIELDS = {
  ballot_name_length: ['nm_urna'],
  office_scope: ['position', 'candidacy_id', 'tipoDisputa', 'uf', 'estado_disputa'],
  proportional_coalition: ['partidosLegenda', 'partido', 'position', 'candidacy_id'],
  minimum_age: ['data_nascimento', 'position', 'candidacy_id', 'disputa_eleitoral'],
} as const satisfies Record<string, ReadonlyArray<keyof CandidacyFields>>;

/** Whether the body sends a field `rule` reads. */
export function sendsFieldOf(sent: Partial<CandidacyFields>, rule: keyof typeof RULE_FIELDS): boolean {
  return RULE_FIELDS[rule].some((field) => sent[field] !== undefined);
}

/** Every rule of this module a candidate body breaks. */
export function checkCandidacyLaw(input: CandidacyLawInput): ErrorDetail[] {
  const { sent } = input;
  return [
    ...(sendsFieldOf(sent, 'ballot_name_length') ? ballotNameLength(sent.nm_urna) : []),
    ...(sendsFieldOf(sent, 'office_scope') ? officeScope(input) : []),
    ...(sendsFieldOf(sent, 'proportional_coalition') ? coalition(input) : []),
    ...(sendsFieldOf(sent, 'minimum_age') ? minimumAge(input) : []),
  ];
}

/** Res. TSE 23.609/2019 art. 25: at most 30 characters, spaces included (counted as characters, not UTF-16 units). */
export function ballotNameLength(name: string | null | undefined): ErrorDetail[] {
  if (typeof name !== 'string') return [];
  const length = [...name.normalize('NFC')].length;
  if (length <= BALLOT_NAME_LIMIT) return [];
  return [problem('nm_urna', 'ballot_name_length', `must have at most ${BALLOT_NAME_LIMIT} characters, spaces included (Res. TSE 23.609/2019 art. 25): it has ${length}`, name.length > 200 ? `${name.slice(0, 199)}…` : name)];
}

/** The scope words `tipoDisputa` may hold, and the office scopes each fits. */
const SCOPE_WORDS: ReadonlyMap<string, ReadonlySet<OfficeScope>> = new Map([
  ['municipal', new Set<OfficeScope>(['municipal'])],
  ['estadual', new Set<OfficeScope>(['state'])],
  ['distrital', new Set<OfficeScope>(['state'])],
  // The court files senators and deputies under the state election and the President under the federal one;
  // people call deputies and senators "federal" too, and a general election holds all of them.
  ['federal', new Set<OfficeScope>(['state', 'national'])],
  ['nacional', new Set<OfficeScope>(['national'])],
  ['geral', new Set<OfficeScope>(['state', 'national'])],
  ['general', new Set<OfficeScope>(['state', 'national'])],
]);

const SCOPE_NAMES: Record<OfficeScope, string> = { municipal: 'municipal', state: 'state (estadual, distrital, federal or geral)', national: 'national (federal, nacional or geral)' };

/**
 * The office against `tipoDisputa` (its scope: a governor is not disputed in a municipal election) and
 * against the contest's state (`estado_disputa`, else `uf`): the Federal District has no municipalities
 * (CF art. 32) and elects deputados distritais instead of estaduais (art. 32 §3º).
 */
export function officeScope({ after, office: found, officeSource }: CandidacyLawInput): ErrorDetail[] {
  if (!found) return [];
  const source = officeSource ?? `position ${after.position}`;
  const details: ErrorDetail[] = [];
  const scopeWord = typeof after.tipoDisputa === 'string' ? plainWords(after.tipoDisputa) : undefined;
  const fits = scopeWord === undefined ? undefined : SCOPE_WORDS.get(scopeWord);
  if (fits && !fits.has(found.scope)) {
    details.push(problem('tipoDisputa', 'office_scope', `must be ${SCOPE_NAMES[found.scope]} for ${found.name} (${source}): the office is disputed in ${found.scope === 'municipal' ? 'a municipality' : found.scope === 'state' ? 'a state or the Federal District' : 'the whole country'} (CF arts. 28, 29, 45, 46, 77)`, after.tipoDisputa!));
  }
  const stateField = after.estado_disputa !== undefined ? 'estado_disputa' : after.uf !== undefined ? 'uf' : undefined;
  const state = stateField && after[stateField];
  if (typeof state === 'string' && found.federalDistrict === 'only' && state !== 'DF') {
    details.push(problem(stateField!, 'office_scope', `must be DF for ${found.name} (${source}): only the Federal District elects deputados distritais (CF art. 32 §3º)`, state));
  }
  if (typeof state === 'string' && found.federalDistrict === 'never' && state === 'DF') {
    const why = found.scope === 'municipal' ? 'the Federal District has no municipalities, so no mayors or councillors (CF art. 32)' : 'the Federal District elects deputados distritais, not estaduais (CF art. 32 §3º)';
    details.push(problem(stateField!, 'office_scope', `must not be DF for ${found.name} (${source}): ${why}`, state));
  }
  return details;
}

/**
 * A coalition's parties (`partidosLegenda`). For a proportional office (councillor, deputies) there is no
 * coalition since 2020 (CF art. 17 §1º, EC 97/2017): the list names one party, or parties of one
 * federation (a federation acts as one party for its term: Lei 9.504/1997 art. 6-A, Lei 9.096/1995 art.
 * 11-A, from Lei 14.208/2021), the entity's own when its party is known. For a majoritarian office a
 * coalition takes a federation whole or not at all. A list of one party is no coalition.
 */
export function coalition({ after, office: found, officeSource, election = {} }: CandidacyLawInput): ErrorDetail[] {
  const listed = after.partidosLegenda ?? [];
  if (!found || listed.length < 2) return [];
  const { year } = election;
  if (year !== undefined && year < FIRST_YEAR_WITHOUT_PROPORTIONAL_COALITIONS && found.proportional) return [];
  const federations = year !== undefined && year < FIRST_YEAR_OF_FEDERATIONS ? [] : (election.federations ?? FEDERATIONS_2022);
  const federationOf = new Map<string, Federation>();
  for (const federation of federations) for (const party of federation.parties) federationOf.set(acronymKey(party), federation);
  const source = officeSource ?? `position ${after.position}`;
  const where = election.title ? ` in ${election.title}` : '';
  if (found.proportional) {
    // The unit the list may name: the party's (its federation, or itself), else the first entry's.
    const own = election.partyAcronym && acronymKey(election.partyAcronym);
    const anchor = own ?? acronymKey(listed[0]!);
    const unit = federationOf.get(anchor);
    const allowed = new Set(unit ? unit.parties.map(acronymKey) : [anchor]);
    const described = unit ? `the parties of ${unit.name} (${unit.parties.join(', ')}), which acts as one party` : `its own party ${own ? election.partyAcronym : listed[0]}`;
    return listed.flatMap((acronym, index) =>
      allowed.has(acronymKey(acronym))
        ? []
        : [problem(`partidosLegenda.${index}`, 'proportional_coalition', `must be one of ${described}: ${found.name} is proportional, and proportional offices have no coalitions since 2020 (CF art. 17 §1º, EC 97/2017; Lei 9.504 art. 6-A)${where} (${source})`, acronym)],
    );
  }
  const named = new Set(listed.map(acronymKey));
  const split = [...new Set(listed.map((acronym) => federationOf.get(acronymKey(acronym))).filter((federation) => federation !== undefined))].filter(
    (federation) => !federation.parties.every((party) => named.has(acronymKey(party))),
  );
  return split.map((federation) =>
    problem('partidosLegenda', 'proportional_coalition', `must name all of ${federation.name}'s parties (${federation.parties.join(', ')}) or none: a federation acts as one party and a coalition cannot split it (Lei 9.504 art. 6-A; Lei 9.096 art. 11-A)${where} (${source})`, listed.join(', ')),
  );
}

/** The age of someone born on `born` on `day` (both YYYY-MM-DD). */
export function ageOnDay(born: string, day: string): number {
  const [by, bm, bd] = born.split('-').map(Number) as [number, number, number];
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return y - by - (m < bm || (m === bm && d < bd) ? 1 : 0);
}

/**
 * CF art. 14 §3º VI: the office's minimum age, on the day Lei 9.504 art. 11 §2º measures it (the
 * inauguration; the registration deadline for the age of 18). Judged only with a real birth date in the
 * past (other rules name a wrong one), an office and the day known.
 */
export function minimumAge({ after, office: found, officeSource, election = {} }: CandidacyLawInput): ErrorDetail[] {
  const born = after.data_nascimento;
  const day = election.ageMeasuredOn;
  if (!found || !born || !day || !isRealPastDate(born)) return [];
  const age = ageOnDay(born, day);
  if (age >= found.minimumAge) return [];
  const when = found.ageMeasuredAt === 'inauguration' ? `when the winners${election.title ? ` of ${election.title}` : ''} take office` : `the registration deadline${election.title ? ` of ${election.title}` : ''}`;
  const source = officeSource ?? `position ${after.position}`;
  return [
    problem('data_nascimento', 'minimum_age', `must make the candidate ${found.minimumAge} by ${day}, ${when}, as ${found.name} requires (CF art. 14 §3º VI; Lei 9.504 art. 11 §2º): born ${born}, they would be ${age} (${source})`, born),
  ];
}

function isRealPastDate(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date && date < new Date().toISOString().slice(0, 10);
}

/**
 * The details of a candidacy the court would refuse, as createEntityFromCandidacy answers them: its body
 * names only `candidacy_id`, so each detail names that field, and its message the entity field the
 * court's value fills in.
 */
export function asCandidacyDetails(details: readonly ErrorDetail[], candidacyId: number): ErrorDetail[] {
  return details.map((detail) => ({ ...detail, field: 'candidacy_id', message: `names candidacy ${candidacyId}, whose ${detail.field} ${detail.message}` }));
}
