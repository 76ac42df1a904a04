/**
 * The facts of the demo data (issue 42, section 9): what fixtures/*.json, the spec's examples and the
 * tests' court files say must agree with the court's layout and codes, with each other and with the
 * electoral calendar, so a wrong fact cannot come back:
 * - proportional winners are `ELEITO POR QP` (2) or `ELEITO POR MÉDIA` (3), never `ELEITO` (1), which is
 *   the majoritarian result;
 * - a 2024 candidacy carries none of the columns the 2024 layout dropped (src/elections/tse/court-file.ts);
 * - one occupation label has one code, the court's (277 for PROFESSOR DE ENSINO MÉDIO), everywhere;
 * - entity 12 says what its candidacy 501 says (occupation, coalition and its parties);
 * - the demo party is one that exists (PEN 51 became Patriota, then merged into PRD 25);
 * - a 2024 mayoral candidate's window is the 2024 election's; no rally campaign is dated after the
 *   2026 vote; the numbers of the São Paulo mayoral campaign are São Paulo's (area code 11).
 * Reads files only: no database.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODES } from './helpers/court-files.js';
import { loadSpec, resolvePointer } from './helpers/spec.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), 'utf8')) as Json;
const court = fixture('elections');
const entities = fixture('entities');
const sms = fixture('sms');
const spec = loadSpec() as Json;
const example = (name: string) => (resolvePointer(spec, `#/components/examples/${name}`) as Json).value;

/** The court's office codes of proportional races (deputies and councillors). */
const PROPORTIONAL_OFFICES = new Set([6, 7, 8, 13]);
/** Results by code, as the fixtures' code table labels them. */
const resultLabel = new Map<number, string>(court.codes.filter((row: Json) => row.code_table === 'sit_tot_turno').map((row: Json) => [row.code, row.label]));
const yearOf = new Map<number, number>(court.elections.map((election: Json) => [election.cd_eleicao, election.ano]));

/** Every object inside `value`, depth first. */
function* objectsIn(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const item of value) yield* objectsIn(item);
  else if (value && typeof value === 'object') {
    yield value as Json;
    for (const child of Object.values(value)) yield* objectsIn(child);
  }
}

describe('fixtures/elections.json', () => {
  it('gives proportional winners the proportional results, and ELEITO only to majoritarian ones', () => {
    for (const candidacy of court.candidacies) {
      const label = resultLabel.get(candidacy.cd_sit_tot_turno);
      if (PROPORTIONAL_OFFICES.has(candidacy.cd_cargo)) expect(label, `candidacy ${candidacy.id}`).not.toBe('ELEITO');
      else expect(['ELEITO POR QP', 'ELEITO POR MÉDIA'], `candidacy ${candidacy.id}`).not.toContain(label);
    }
    expect(court.candidacies.find((candidacy: Json) => candidacy.id === 503)).toMatchObject({ cd_cargo: 13, cd_sit_tot_turno: 2 });
    expect(resultLabel.get(2)).toBe('ELEITO POR QP');
  });

  it('leaves the columns the 2024 layout dropped empty in 2024 candidacies', () => {
    const of2024 = court.candidacies.filter((candidacy: Json) => yearOf.get(candidacy.cd_eleicao) === 2024);
    expect(of2024.length).toBeGreaterThan(0);
    for (const candidacy of of2024) {
      expect(candidacy, `candidacy ${candidacy.id}`).toMatchObject({ cd_nacionalidade: null, nm_municipio_nascimento: null, st_reeleicao: null });
    }
  });

  it('codes each occupation as the court does, the same in the fixtures, the spec and the court files', () => {
    const [professorCode, professorLabel] = CODES.ocupacao.professor;
    expect(professorCode).toBe('277');
    const byLabel = new Map<string, Set<number>>();
    const record = (code: number, label: string) => byLabel.set(label, new Set([...(byLabel.get(label) ?? []), code]));
    for (const row of court.codes.filter((row: Json) => row.code_table === 'ocupacao')) record(row.code, row.label);
    for (const object of objectsIn(spec.components.examples)) {
      for (const entry of Array.isArray(object.ocupacao) ? object.ocupacao : []) if (entry && typeof entry.code === 'number') record(entry.code, entry.label);
    }
    for (const [code, label] of Object.values(CODES.ocupacao)) record(Number(code), label);
    for (const [label, codes] of byLabel) expect([...codes], label).toHaveLength(1);
    expect([...byLabel.get(professorLabel)!]).toEqual([277]);
  });
});

describe('fixtures/entities.json', () => {
  const maria = entities.entities.find((entity: Json) => entity.id === 12).record;
  const candidacy = court.candidacies.find((row: Json) => row.id === 501);
  const coalition = court.coalitions.find((row: Json) => row.sq_coligacao === candidacy.sq_coligacao);

  it("says what Maria Santos's candidacy says: occupation, coalition and its parties", () => {
    expect(maria.ocupacao).toBe(candidacy.cd_ocupacao);
    expect(maria.nomeLegenda).toBe(coalition.nm_coligacao);
    // "Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV) / PSB": every party, the federation's included.
    const parties = (coalition.ds_composicao as string).split(' / ').flatMap((part) => (part.match(/\(([^)]*)\)/)?.[1] ?? part).split('/'));
    const acronym = (name: string) => name.replace(/\s+/g, '').toUpperCase();
    expect(maria.partidosLegenda.map(acronym).sort()).toEqual(parties.map(acronym).sort());
    expect(maria.nr_urna).toBe(candidacy.nr_candidato);
    expect(maria.data_nascimento).toBe(candidacy.dt_nascimento);
  });

  it('names a party that exists: PRD 25, not PEN 51 (PEN became Patriota, which merged into PRD)', () => {
    const party = entities.entities.find((entity: Json) => entity.tp === 'partido').record;
    expect(party).toMatchObject({ nm_urna: 'PRD', partido: '25', nome: 'Partido Renovação Democrática' });
    const specParties = [...objectsIn(spec.components.examples), ...objectsIn(spec.paths)].filter((object) => object.tp === 'partido' || object.ward_tp === 'partido');
    expect(specParties.length).toBeGreaterThan(0);
    for (const object of specParties) {
      expect(object.partido ?? '25').not.toBe('51');
      expect(object.nm_urna ?? 'PRD').not.toBe('PEN');
    }
  });
});

describe("the spec's examples", () => {
  it("judge the 2024 mayoral candidate by the 2024 election's calendar", () => {
    const window = example('SmsComplianceOfLinkedEntity').data.effective_window;
    expect(window.election.ano).toBe(2024);
    expect(window.starts_on.startsWith('2024-')).toBe(true);
    expect(window.ends_on <= '2024-10-26').toBe(true);
  });

  it('date no rally campaign after the 2026 vote', () => {
    const firstRound2026 = '2026-10-04';
    const campaigns = [...objectsIn(spec.components.examples), ...objectsIn(spec.paths), ...objectsIn(sms)].filter((object) => typeof object.created_at === 'string' && (typeof object.titulo === 'string' || typeof object.title === 'string'));
    expect(campaigns.length).toBeGreaterThan(0);
    for (const campaign of campaigns) {
      const words = `${campaign.titulo ?? campaign.title} ${campaign.mensagem?.mensagem ?? campaign.text ?? ''}`;
      if (campaign.created_at.slice(0, 10) > firstRound2026) expect(words, `${campaign.id} of ${campaign.created_at}`).not.toMatch(/comício/i);
    }
    for (const object of objectsIn(spec.components.examples)) {
      if (typeof object.text === 'string' && /^Comício/.test(object.text)) throw new Error(`a rally text in an example: ${object.text}`);
    }
  });

  it('give the São Paulo mayoral campaign São Paulo numbers (area code 11)', () => {
    const numbers = (text: string) => [...text.matchAll(/\+?\(?\d[\d() -]{9,}\d/g)].map((match) => match[0].replace(/\D/g, '').replace(/^55/, ''));
    for (const listed of [example('SmsCampaignRequest').mensagem.recipient_list_str, sms.campaigns[0].mensagem.recipient_list_str]) {
      expect(numbers(listed).length).toBe(3);
      for (const number of numbers(listed)) expect(number.slice(0, 2), listed).toBe('11');
    }
    for (const message of sms.campaigns.flatMap((campaign: Json) => campaign.messages)) expect(message.recipient.startsWith('+5511'), message.recipient).toBe(true);
    for (const reply of sms.replies) expect(reply.from.startsWith('+5511'), reply.from).toBe(true);
  });
});
