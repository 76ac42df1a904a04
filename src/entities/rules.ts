/**
 * What makes a candidate entity valid beyond its schema (which the validator already enforced): Brazilian
 * document check digits (@palanque/rules/documents, shared with the stateful mock), real dates, states and municipalities that
 * exist, absolute web addresses and registered party acronyms. Each broken rule is one detail, so a form
 * can mark every wrong field at once.
 */
import { documentProblems } from '@palanque/rules/documents';
import { REGISTERED_PARTIES as PARTY_REGISTRATIONS, partiesRegisteredOn } from '@palanque/rules/registered-parties';
import type { ErrorDetail } from '../http/errors.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { STATE_CODE_BY_ACRONYM } from '../municipalities/rules.js';
import { checkWebAddress } from '../web-address.js';
import type { CandidateEntity } from './models.js';

/**
 * Parties registered with the electoral court (TSE) on the day the server started, by acronym as
 * `normaliseAcronym` writes it (compared without accents, case or spaces), from the registered parties'
 * list (packages/rules/src/registered-parties.ts, its source cited there), not a copy of it.
 */
export const REGISTERED_PARTIES: ReadonlySet<string> = new Set(
  partiesRegisteredOn(PARTY_REGISTRATIONS, new Date().toISOString().slice(0, 10)).map((party) => normaliseAcronym(party.sg_partido)),
);

/**
 * How a coalition's party acronyms (`partidosLegenda`) are judged: against the parties registered with the
 * TSE by default, against those running in the entity's election once the court's data has it
 * (electoral-rules.ts).
 */
export interface CoalitionParties {
  /** Acronyms as `normaliseAcronym` writes them. */
  acronyms: ReadonlySet<string>;
  rule: string;
  message: string;
}

export const REGISTERED_WITH_COURT: CoalitionParties = {
  acronyms: REGISTERED_PARTIES,
  rule: 'registered_party',
  message: 'must be the acronym of a party registered with the TSE',
};

/** The fields of a body without those sent as `null` (a cleared field breaks no rule). */
export type Sent = { [Field in keyof CandidateEntity]?: Exclude<CandidateEntity[Field], null> };

/**
 * The rules a body breaks. `stored` is the entity an update applies to: a rule between two fields (the
 * age and the birth date, the ballot number and the party, a municipality and its state) is checked on the
 * entity as it will be whenever the body names either field, so an update cannot make the pair disagree;
 * the other rules judge only the fields the body names.
 */
export function checkCandidate(
  entity: CandidateEntity,
  municipalities: MunicipalityCatalog,
  today = new Date(),
  stored: CandidateEntity = { nome: entity.nome },
  coalitionParties = REGISTERED_WITH_COURT,
): ErrorDetail[] {
  const sent = withoutNulls(entity);
  const after = withoutNulls({ ...stored, ...entity });
  return [
    ...documentProblems(sent, after),
    ...birth(sent, after, today),
    ...states(sent),
    ...municipalitiesExist(sent, after, municipalities),
    ...webAddresses(sent),
    ...parties(sent, coalitionParties),
  ];
}

export function withoutNulls(entity: CandidateEntity): Sent {
  return Object.fromEntries(Object.entries(entity).filter(([, value]) => value !== null)) as Sent;
}

const problem = (field: string, rule: string, message: string, value?: unknown): ErrorDetail => ({
  location: 'body',
  field,
  rule,
  message,
  ...(value === undefined ? {} : { value: value as ErrorDetail['value'] }),
});

function birth(sent: Sent, after: Sent, today: Date): ErrorDetail[] {
  const { data_nascimento, idade } = after;
  if (data_nascimento === undefined || (sent.data_nascimento === undefined && sent.idade === undefined)) return [];
  const born = new Date(`${data_nascimento}T00:00:00Z`);
  if (Number.isNaN(born.getTime()) || born.toISOString().slice(0, 10) !== data_nascimento) {
    return [problem('data_nascimento', 'real_date', 'must be a real calendar date', data_nascimento)];
  }
  if (data_nascimento >= today.toISOString().slice(0, 10)) return [problem('data_nascimento', 'in_past', 'must be in the past', data_nascimento)];
  const age = ageOn(born, today);
  // A stored age that a birthday has made stale is not the sender's fault: only a sent age is judged.
  if (sent.idade !== undefined && idade !== age) {
    return [problem('idade', 'consistent_age', `must be ${age}, the age given by data_nascimento`, idade)];
  }
  return [];
}

/** The age of someone born on `born`, on `today` (UTC dates). */
export function ageOn(born: Date, today: Date): number {
  const years = today.getUTCFullYear() - born.getUTCFullYear();
  const beforeBirthday =
    today.getUTCMonth() < born.getUTCMonth() || (today.getUTCMonth() === born.getUTCMonth() && today.getUTCDate() < born.getUTCDate());
  return beforeBirthday ? years - 1 : years;
}

const STATE_FIELDS = ['uf', 'estado_nascimento', 'estado_disputa', 'estadoBase'] as const;

function states(entity: Sent): ErrorDetail[] {
  return STATE_FIELDS.flatMap((field) => {
    const value = entity[field];
    return value !== undefined && !STATE_CODE_BY_ACRONYM.has(value)
      ? [problem(field, 'known_state', 'must be one of the 27 state acronyms', value)]
      : [];
  });
}

/** The municipality of dispute and of the base must exist, and lie in the state given beside them. */
function municipalitiesExist(sent: Sent, after: Sent, catalog: MunicipalityCatalog): ErrorDetail[] {
  const pairs = [
    { field: 'municipio_disputa', stateField: 'estado_disputa', code: after.municipio_disputa, state: after.estado_disputa, named: sent.municipio_disputa ?? sent.estado_disputa },
    { field: 'municipioBase', stateField: 'estadoBase', code: after.municipioBase, state: after.estadoBase, named: sent.municipioBase ?? sent.estadoBase },
  ];
  return pairs.flatMap(({ field, code, state, stateField, named }) => {
    if (code === undefined || named === undefined) return [];
    const municipality = catalog.find(Number(code));
    if (!municipality) return [problem(field, 'known_municipality', 'must be the IBGE code of a municipality in the list', code)];
    const stateCode = state === undefined ? undefined : STATE_CODE_BY_ACRONYM.get(state);
    if (stateCode !== undefined && municipality.codigo_uf !== stateCode) {
      return [problem(field, 'in_state', `must be a municipality of ${stateField} (${state}); ${municipality.nome} is not`, code)];
    }
    return [];
  });
}

function webAddresses(entity: Sent): ErrorDetail[] {
  const addresses: Array<[string, string | undefined]> = [['image_url', entity.image_url]];
  for (const [index, entry] of (entity.referencia_social?.social_network ?? []).entries()) {
    for (const key of ['img', 'img_url', 'link'] as const) addresses.push([`referencia_social.social_network.${index}.${key}`, entry[key]]);
  }
  return addresses.flatMap(([field, value]) =>
    value !== undefined && !checkWebAddress(value, field).ok ? [problem(field, 'http_url', 'must be an absolute http(s) address', value)] : [],
  );
}

function parties({ partidosLegenda = [] }: Sent, { acronyms, rule, message }: CoalitionParties): ErrorDetail[] {
  return partidosLegenda.flatMap((acronym, index) => (acronyms.has(normaliseAcronym(acronym)) ? [] : [problem(`partidosLegenda.${index}`, rule, message, acronym)]));
}

/** A party acronym compared without accents, case or spaces ("PC do B" and "PCdoB" are one party). */
export function normaliseAcronym(acronym: string): string {
  return acronym.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/\s+/g, '').toUpperCase();
}
