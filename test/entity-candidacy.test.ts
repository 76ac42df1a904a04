/**
 * Entities and the electoral court's candidacies (issue 22): an entity created from a candidacy (filled
 * in, linked, its personal data only for those who read candidacies whole, masked for a viewer), linked
 * later and unlinked (in the edit history), getEntity and the list showing the candidacy's situation and
 * result; addEntity's checks by the court's tables (ballot-number length, party of the election, code
 * tables), with the tables loaded and without them; and the 13-digit título of an older SP voter.
 * The court's tables are filled directly through their models. On SQLite, and on PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { createHash } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { defineCourtModels, type CandidacyRow, type CodeRow } from '../src/elections/tse/models.js';
import { searchableName } from '../src/elections/tse/names.js';
import { courtReferenceOf } from '../src/elections/tse/reference.js';
import { REGISTERED_PARTIES, partiesRunningOn } from '@palanque/rules/registered-parties';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ADD = '/api/entidade/add/';
const FROM_CANDIDACY = '/api/entidade/from_candidacy/';

const call = (app: TestApp, method: 'GET' | 'POST', path: string, caller: TestUser, body?: unknown): Promise<Result> => request(app.baseUrl, method, path, caller.headers, body);
const add = (app: TestApp, caller: TestUser, body: Json, tp = 'candidato') => call(app, 'POST', `${ADD}?tp=${tp}`, caller, body);
const fromCandidacy = (app: TestApp, caller: TestUser, candidacyId: number, tp?: string) => call(app, 'POST', `${FROM_CANDIDACY}${tp ? `?tp=${tp}` : ''}`, caller, { candidacy_id: candidacyId });
const read = (app: TestApp, caller: TestUser, id: number) => call(app, 'GET', `/api/entidade/data/?id=${id}`, caller);

// --- the court's data, written through its models ----------------------------------------------------

const MUNICIPAL_2024 = 619;
const MUNICIPAL_2024_SECOND_ROUND = 620;
const STATE_2022 = 546;

/** Candidacies of the sample (ids fixed, so tests can name them). */
const MARIA = 501; // mayor of São Paulo, 2024, with every personal column
const JOAO = 502; // councillor of São Paulo, 2024, personal columns withheld, no result yet
const LUCIANA = 503; // federal deputy, 2022 (no coalition: none for proportional offices since 2020, EC 97/2017)
const PEDRO = 504; // mayor of São Paulo, 2024, candidacy refused (indeferido)
const RENATA = 505; // governor of São Paulo, 2022, in a coalition with PTB (merged into PRD since)

const OFFICES = [
  [1, 'PRESIDENTE', 2], [2, 'VICE-PRESIDENTE', 2], [3, 'GOVERNADOR', 2], [4, 'VICE-GOVERNADOR', 2], [5, 'SENADOR', 3],
  [6, 'DEPUTADO FEDERAL', 4], [7, 'DEPUTADO ESTADUAL', 5], [8, 'DEPUTADO DISTRITAL', 5], [9, '1º SUPLENTE', 3],
  [10, '2º SUPLENTE', 3], [11, 'PREFEITO', 2], [12, 'VICE-PREFEITO', 2], [13, 'VEREADOR', 5],
] as const;

/** More occupations than a 422 lists (20): it names the table instead. */
const OCCUPATIONS: Array<[number, string]> = [
  [131, 'ADVOGADO'], [169, 'COMERCIANTE'], [257, 'EMPRESÁRIO'], [265, 'PROFESSOR DE ENSINO MÉDIO'], [999, 'OUTROS'],
  ...Array.from({ length: 20 }, (_, index): [number, string] => [300 + index, `OCUPAÇÃO ${index + 1}`]),
];

const CODES: Array<Omit<CodeRow, 'code_table'> & { code_table: CodeRow['code_table'] }> = [
  ...[[2, 'MASCULINO'], [4, 'FEMININO']].map(([code, label]) => ({ code_table: 'genero' as const, code: code as number, label: label as string })),
  ...[[2, 'LÊ E ESCREVE'], [6, 'ENSINO MÉDIO COMPLETO'], [7, 'SUPERIOR INCOMPLETO'], [8, 'SUPERIOR COMPLETO']].map(([code, label]) => ({ code_table: 'grau_instrucao' as const, code: code as number, label: label as string })),
  ...[[1, 'SOLTEIRO(A)'], [3, 'CASADO(A)'], [5, 'VIÚVO(A)'], [7, 'SEPARADO(A) JUDICIALMENTE'], [9, 'DIVORCIADO(A)']].map(([code, label]) => ({ code_table: 'estado_civil' as const, code: code as number, label: label as string })),
  ...[[1, 'BRANCA'], [2, 'PRETA'], [3, 'PARDA'], [4, 'AMARELA'], [5, 'INDÍGENA'], [6, 'NÃO INFORMADO']].map(([code, label]) => ({ code_table: 'cor_raca' as const, code: code as number, label: label as string })),
  ...[[1, 'BRASILEIRA NATA'], [2, 'BRASILEIRA (NATURALIZADA)']].map(([code, label]) => ({ code_table: 'nacionalidade' as const, code: code as number, label: label as string })),
  ...OCCUPATIONS.map(([code, label]) => ({ code_table: 'ocupacao' as const, code, label })),
  ...[[2, 'DEFERIDO'], [3, 'INDEFERIDO'], [12, 'APTO']].map(([code, label]) => ({ code_table: 'situacao_candidatura' as const, code: code as number, label: label as string })),
  ...[[1, 'ELEITO'], [4, 'NÃO ELEITO'], [5, 'SUPLENTE'], [6, '2º TURNO']].map(([code, label]) => ({ code_table: 'sit_tot_turno' as const, code: code as number, label: label as string })),
];

const PARTIES_2024: Array<[number, string]> = [[13, 'PT'], [15, 'MDB'], [40, 'PSB'], [43, 'PV'], [45, 'PSDB'], [50, 'PSOL'], [65, 'PC do B']];

function candidacy(fields: Partial<CandidacyRow> & Pick<CandidacyRow, 'id' | 'cd_eleicao' | 'cd_cargo' | 'nr_candidato' | 'nm_candidato' | 'nm_urna_candidato' | 'nr_partido'>): CandidacyRow {
  const row = {
    sq_candidato: `2500020${String(fields.id).padStart(5, '0')}`,
    sg_uf: 'SP',
    sg_ue: '71072',
    nr_cpf: null,
    nr_titulo_eleitoral: null,
    nr_federacao: null,
    sq_coligacao: null,
    cd_nacionalidade: 1,
    sg_uf_nascimento: null,
    nm_municipio_nascimento: null,
    dt_nascimento: null,
    cd_genero: 2,
    cd_grau_instrucao: 8,
    cd_estado_civil: 1,
    cd_cor_raca: null,
    cd_ocupacao: 131,
    cd_situacao_candidatura: 12,
    cd_sit_tot_turno: null,
    st_reeleicao: false,
    updated_at: new Date('2024-10-07T03:00:00Z'),
    ...fields,
  };
  return { ...row, nm_busca: searchableName(row.nm_candidato, row.nm_urna_candidato), row_hash: createHash('sha256').update(JSON.stringify(row)).digest('hex') } as CandidacyRow;
}

const CANDIDACIES: CandidacyRow[] = [
  candidacy({
    id: MARIA, cd_eleicao: MUNICIPAL_2024, cd_cargo: 11, nr_candidato: 13, nm_candidato: 'MARIA DA SILVA SANTOS', nm_urna_candidato: 'MARIA SANTOS',
    nr_partido: 13, nr_cpf: '52998224725', nr_titulo_eleitoral: '102345670183', sq_coligacao: '250002000101', sg_uf_nascimento: 'SP',
    nm_municipio_nascimento: 'SÃO PAULO', dt_nascimento: '1978-05-14', cd_genero: 4, cd_estado_civil: 3, cd_cor_raca: 3, cd_ocupacao: 257, cd_sit_tot_turno: 6,
  }),
  candidacy({ id: JOAO, cd_eleicao: MUNICIPAL_2024, cd_cargo: 13, nr_candidato: 50123, nm_candidato: "JOÃO D'ÁVILA DA SILVA", nm_urna_candidato: "JOÃO D'ÁVILA", nr_partido: 50, cd_grau_instrucao: 7 }),
  candidacy({ id: LUCIANA, cd_eleicao: STATE_2022, cd_cargo: 6, sg_ue: 'SP', nr_candidato: 1311, nm_candidato: 'LUCIANA MARIA DA SILVA', nm_urna_candidato: 'LUCIANA DA SAÚDE', nr_partido: 13, cd_genero: 4, cd_sit_tot_turno: 5, updated_at: new Date('2022-10-03T03:00:00Z') }),
  candidacy({ id: RENATA, cd_eleicao: STATE_2022, cd_cargo: 3, sg_ue: 'SP', nr_candidato: 30, nm_candidato: 'RENATA COSTA LIMA', nm_urna_candidato: 'RENATA COSTA', nr_partido: 30, sq_coligacao: '250001600001', cd_genero: 4, cd_sit_tot_turno: 4, updated_at: new Date('2022-10-03T03:00:00Z') }),
  candidacy({ id: PEDRO, cd_eleicao: MUNICIPAL_2024, cd_cargo: 11, nr_candidato: 15, nm_candidato: 'PEDRO HENRIQUE ALVES', nm_urna_candidato: 'PEDRO ALVES', nr_partido: 15, sq_coligacao: '250002000102', cd_situacao_candidatura: 3, cd_sit_tot_turno: 4 }),
];

async function loadCourtData(app: TestApp): Promise<void> {
  const court = defineCourtModels(app.sequelize);
  const updated_at = new Date('2024-10-07T03:00:00Z');
  await court.Election.bulkCreate([
    { cd_eleicao: MUNICIPAL_2024, ano: 2024, cd_tipo_eleicao: 2, nr_turno: 1, ds_eleicao: 'Eleições Municipais 2024', dt_eleicao: '2024-10-06', tp_abrangencia: 'MUNICIPAL', updated_at },
    { cd_eleicao: MUNICIPAL_2024_SECOND_ROUND, ano: 2024, cd_tipo_eleicao: 2, nr_turno: 2, ds_eleicao: 'Eleições Municipais 2024 - 2º turno', dt_eleicao: '2024-10-27', tp_abrangencia: 'MUNICIPAL', updated_at },
    { cd_eleicao: STATE_2022, ano: 2022, cd_tipo_eleicao: 2, nr_turno: 1, ds_eleicao: 'Eleições Gerais Estaduais 2022', dt_eleicao: '2022-10-02', tp_abrangencia: 'ESTADUAL', updated_at },
  ]);
  await court.Office.bulkCreate(OFFICES.map(([cd_cargo, ds_cargo, ballot_digits]) => ({ cd_cargo, ds_cargo, ballot_digits })));
  await court.Code.bulkCreate(CODES);
  await court.Party.bulkCreate([
    ...PARTIES_2024.map(([nr_partido, sg_partido]) => ({ cd_eleicao: MUNICIPAL_2024, nr_partido, sg_partido, nm_partido: `Partido ${sg_partido}`, nr_federacao: null })),
    // The second round's file holds only its two candidates' parties: the checks use the first round's.
    { cd_eleicao: MUNICIPAL_2024_SECOND_ROUND, nr_partido: 13, sg_partido: 'PT', nm_partido: 'Partido PT', nr_federacao: null },
    // PTB ran in 2022 and merged into PRD in 2023.
    ...[[13, 'PT'], [14, 'PTB'], [30, 'NOVO'], [45, 'PSDB']].map(([nr_partido, sg_partido]) => ({ cd_eleicao: STATE_2022, nr_partido: nr_partido as number, sg_partido: sg_partido as string, nm_partido: `Partido ${sg_partido}`, nr_federacao: null })),
  ]);
  await court.Coalition.bulkCreate([
    { sq_coligacao: '250002000101', cd_eleicao: MUNICIPAL_2024, nm_coligacao: 'SÃO PAULO DE TODOS', ds_composicao: 'Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV) / PSB' },
    // PTB merged into PRD in 2023: it runs in no 2024 election (nor is it registered today, src/entities/rules.ts).
    { sq_coligacao: '250002000102', cd_eleicao: MUNICIPAL_2024, nm_coligacao: 'FRENTE AMPLA', ds_composicao: 'PTB / MDB' },
    { sq_coligacao: '250001600001', cd_eleicao: STATE_2022, nm_coligacao: 'SÃO PAULO PARA TODOS', ds_composicao: 'NOVO / PTB' },
  ]);
  await court.Unit.bulkCreate([
    { sg_ue: '71072', sg_uf: 'SP', nm_ue: 'SÃO PAULO', codigo_ibge: 3550308 },
    { sg_ue: 'SP', sg_uf: 'SP', nm_ue: 'SÃO PAULO', codigo_ibge: null },
  ]);
  await court.Candidacy.bulkCreate(CANDIDACIES);
  // Written behind the import's back: the view of the tables is dropped, as the import does.
  courtReferenceOf(app.sequelize).invalidate();
}

/** Candidacy `id`'s result, as a later import of the file would write it. */
async function setResult(app: TestApp, id: number, cdSitTotTurno: number | null): Promise<void> {
  await defineCourtModels(app.sequelize).Candidacy.update({ cd_sit_tot_turno: cdSitTotTurno, updated_at: new Date() }, { where: { id } });
}

async function addMember(app: TestApp, entityId: number, user: TestUser, role: 'admin' | 'operator' | 'viewer'): Promise<void> {
  await app.entities.models.Member.create({ entity_id: entityId, user_id: user.user.id, role, added_at: new Date() });
}

async function historyOf(app: TestApp, caller: TestUser, id: number): Promise<Json[]> {
  const answer = await call(app, 'GET', `/api/entidade/history/?id=${id}`, caller);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.results;
}

/** The details of a 422, as `field:rule`. */
function rulesBroken(answer: Result): string[] {
  expectError(answer, 422, 'validation_failed');
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`).sort();
}

// --- with the court's data loaded --------------------------------------------------------------------

describe('with the court\'s data loaded', () => {
  let app: TestApp;
  let carlos: TestUser;
  let ana: TestUser;
  let vera: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ withMunicipalities: true });
    await loadCourtData(app);
    carlos = await createUser(app, { first_name: 'Carlos', last_name: 'Pereira' });
    ana = await createAdmin(app, { first_name: 'Ana', last_name: 'Souza' });
    vera = await createUser(app, { first_name: 'Vera', last_name: 'Leitora' });
  });

  afterAll(async () => {
    await app?.close();
  });

  describe('createEntityFromCandidacy', () => {
    it('fills the entity in from the candidacy and keeps the link, without personal data for a campaign user', async () => {
      const created = await fromCandidacy(app, carlos, MARIA);
      expect(created.status, created.text).toBe(201);
      expect(created.headers.get('etag')).toBe('"1"');
      const entity = created.body.data;
      expect(entity).toEqual({
        id: expect.any(Number),
        nome: 'MARIA DA SILVA SANTOS',
        nm_urna: 'MARIA SANTOS',
        nr_urna: 13,
        partido: '13',
        position: 'prefeito',
        tipoDisputa: 'municipal',
        ballot: 'primeiro_turno',
        paisDisputa: 'BR',
        uf: 'SP',
        estado_disputa: 'SP',
        municipio_disputa: '3550308',
        cidade: 'São Paulo',
        data_nascimento: '1978-05-14',
        idade: expect.any(Number),
        estado_nascimento: 'SP',
        pais_nascimento: 'BR',
        municipio_nascimento: 'SÃO PAULO',
        nacionalidade: 1,
        genero: 'feminino',
        instrucao: 8,
        ocupacao: 257,
        estado_civil: 3,
        reeleicao: false,
        asLegenda: true,
        nomeLegenda: 'SÃO PAULO DE TODOS',
        partidosLegenda: ['PT', 'PCdoB', 'PV', 'PSB'],
        candidacy_id: MARIA,
        candidacy: {
          id: MARIA,
          cd_eleicao: MUNICIPAL_2024,
          ano: 2024,
          sq_candidato: '250002000501',
          nr_candidato: 13,
          nm_candidato: 'MARIA DA SILVA SANTOS',
          nm_urna_candidato: 'MARIA SANTOS',
          cargo: { cd_cargo: 11, ds_cargo: 'PREFEITO' },
          partido: { nr_partido: 13, sg_partido: 'PT' },
          sg_uf: 'SP',
          unidade: { sg_ue: '71072', nm_ue: 'SÃO PAULO', codigo_ibge: 3550308 },
          situacao_candidatura: { code: 12, label: 'APTO' },
          sit_tot_turno: { code: 6, label: '2º TURNO' },
        },
        municipioBase: null,
        marketshare: [],
        tp: 'candidato',
        updated_at: expect.any(String),
        updated_by: { id: carlos.user.id, display_name: 'Carlos Pereira' },
      });
      expect(created.body.message).toBe(`Entity ${entity.id} created from candidacy ${MARIA}.`);
      // The court's CPF, voter id and race are read whole by platform admins only: not filled in for Carlos.
      const [row] = await app.sequelize.query<Json>('SELECT cpf, titulo_eleitor, raca, candidacy_id FROM entities WHERE id = ?', { replacements: [entity.id], type: QueryTypes.SELECT });
      expect({ ...row, candidacy_id: Number(row!.candidacy_id) }).toEqual({ cpf: null, titulo_eleitor: null, raca: null, candidacy_id: MARIA });
      // getEntity answers the same record, and the history records the creation with its link.
      expect((await read(app, carlos, entity.id)).body.data).toEqual(entity);
      const [creation] = await historyOf(app, carlos, entity.id);
      expect(creation).toMatchObject({ action: 'created', actor: { id: carlos.user.id } });
      expect(creation!.changes).toContainEqual({ field: 'candidacy_id', before: null, after: MARIA });
      expect(creation!.changes.map((change: Json) => change.field)).not.toContain('cpf');
    });

    it('fills in the personal data for a platform admin, which the team reads by role: masked for a viewer', async () => {
      const created = await fromCandidacy(app, ana, MARIA, 'concorrente');
      expect(created.status, created.text).toBe(201);
      const id = created.body.data.id;
      expect(created.body.data).toMatchObject({ cpf: '529.982.247-25', titulo_eleitor: '102345670183', raca: 3, candidacy_id: MARIA });
      const [row] = await app.sequelize.query<Json>('SELECT tp FROM entities WHERE id = ?', { replacements: [id], type: QueryTypes.SELECT });
      expect(row!.tp).toBe('concorrente');

      await addMember(app, id, vera, 'viewer');
      const seen = await read(app, vera, id);
      expect(seen.status, seen.text).toBe(200);
      expect(seen.body.data).toMatchObject({ cpf: '***.982.247-**', titulo_eleitor: '********0183', candidacy_id: MARIA });
      expect(seen.body.data).not.toHaveProperty('raca');
      // What the entity shows of its candidacy carries none of the candidacy's personal data.
      expect(JSON.stringify(seen.body.data.candidacy)).not.toMatch(/52998224725|982\.247|102345670183/);
      expect(seen.body.data.candidacy).toEqual(created.body.data.candidacy);
    });

    it('refuses a second entity of the same teams linked to the candidacy (409), an unknown candidacy (404) and a bad body (422)', async () => {
      const owner = await createUser(app);
      const first = await fromCandidacy(app, owner, JOAO);
      expect(first.status, first.text).toBe(201);
      const again = await fromCandidacy(app, owner, JOAO);
      expectError(again, 409, 'conflict');
      expect(again.body.error.details).toEqual([
        { location: 'body', field: 'candidacy_id', rule: 'unique_in_team', message: `is already linked to entity ${first.body.data.id} of your teams`, value: JOAO },
      ]);
      // Another campaign may track the same candidacy.
      expect((await fromCandidacy(app, await createUser(app), JOAO)).status).toBe(201);

      const unknown = await fromCandidacy(app, owner, 999999);
      expectError(unknown, 404, 'not_found');
      expect(unknown.body.error.details).toEqual([
        { location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: 999999 },
      ]);
      expect(rulesBroken(await call(app, 'POST', FROM_CANDIDACY, owner, {}))).toEqual(['candidacy_id:required']);
    });

    it("leaves out a court's value the entity rules refuse, and says so", async () => {
      const created = await fromCandidacy(app, await createUser(app), PEDRO);
      expect(created.status, created.text).toBe(201);
      expect(created.body.data).toMatchObject({ asLegenda: true, nomeLegenda: 'FRENTE AMPLA', candidacy_id: PEDRO });
      expect(created.body.data).not.toHaveProperty('partidosLegenda');
      expect(created.body.message).toBe(`Entity ${created.body.data.id} created from candidacy ${PEDRO}. Left out, as the entity rules refuse the court's value: partidosLegenda.`);
    });

    it('leaves unset what the file withholds', async () => {
      const created = await fromCandidacy(app, await createAdmin(app), JOAO);
      expect(created.status, created.text).toBe(201);
      const entity = created.body.data;
      for (const field of ['cpf', 'titulo_eleitor', 'raca', 'data_nascimento', 'idade', 'estado_nascimento', 'asLegenda', 'nomeLegenda']) expect(entity, field).not.toHaveProperty(field);
      expect(entity).toMatchObject({ nr_urna: 50123, position: 'vereador', instrucao: 7, candidacy: { sit_tot_turno: null, situacao_candidatura: { code: 12, label: 'APTO' } } });
    });
  });

  describe('linking an entity later', () => {
    it('links it through addEntity, shows the candidacy in getEntity and the list, unlinks it, and records both in the history', async () => {
      const owner = await createUser(app);
      const created = await add(app, owner, { nome: 'Pedro Henrique Alves', position: 'prefeito', nr_urna: 15, partido: '15' });
      expect(created.status, created.text).toBe(201);
      const id = created.body.data.id;
      expect(created.body.data).not.toHaveProperty('candidacy_id');
      expect(created.body.data).not.toHaveProperty('candidacy');

      const linked = await add(app, owner, { id, nome: 'Pedro Henrique Alves', candidacy_id: PEDRO });
      expect(linked.status, linked.text).toBe(200);
      // Linking changes no other field.
      expect(linked.body.data).toMatchObject({ nome: 'Pedro Henrique Alves', nr_urna: 15, candidacy_id: PEDRO });
      expect(linked.body.data.candidacy).toMatchObject({ id: PEDRO, situacao_candidatura: { code: 3, label: 'INDEFERIDO' }, sit_tot_turno: { code: 4, label: 'NÃO ELEITO' } });
      const listed = await call(app, 'GET', '/api/entidade/', owner);
      expect(listed.body.data.results).toEqual([expect.objectContaining({ id, candidacy: linked.body.data.candidacy })]);
      // The record posted back whole (its read-only candidacy included) changes nothing.
      const postedBack = await add(app, owner, (await read(app, owner, id)).body.data);
      expect(postedBack.status, postedBack.text).toBe(200);
      expect(postedBack.body.data.candidacy_id).toBe(PEDRO);

      const unlinked = await add(app, owner, { id, nome: 'Pedro Henrique Alves', candidacy_id: null });
      expect(unlinked.status, unlinked.text).toBe(200);
      expect(unlinked.body.data).not.toHaveProperty('candidacy_id');
      expect(unlinked.body.data).not.toHaveProperty('candidacy');
      expect((await call(app, 'GET', '/api/entidade/', owner)).body.data.results[0].candidacy).toBeNull();

      const history = await historyOf(app, owner, id);
      expect(history.map((row) => [row.action, row.changes])).toEqual([
        ['updated', [{ field: 'candidacy_id', before: PEDRO, after: null }]],
        ['updated', [{ field: 'candidacy_id', before: null, after: PEDRO }]],
        ['created', expect.any(Array)],
      ]);
    });

    it('refuses a candidacy_id that names no candidacy (422) and a candidacy another entity of the teams is linked to (409)', async () => {
      const owner = await createUser(app);
      const first = await add(app, owner, { nome: 'Luciana Maria da Silva', candidacy_id: LUCIANA });
      expect(first.status, first.text).toBe(201);
      expect(first.body.data.candidacy).toMatchObject({ id: LUCIANA, cargo: { cd_cargo: 6, ds_cargo: 'DEPUTADO FEDERAL' }, sit_tot_turno: { code: 5, label: 'SUPLENTE' } });
      const second = await add(app, owner, { nome: 'Luciana de novo' });
      const taken = await add(app, owner, { id: second.body.data.id, nome: 'Luciana de novo', candidacy_id: LUCIANA });
      expectError(taken, 409, 'conflict');
      expect(taken.body.error.details[0]).toMatchObject({ field: 'candidacy_id', rule: 'unique_in_team', value: LUCIANA });

      const unknown = await add(app, owner, { id: second.body.data.id, nome: 'Luciana de novo', candidacy_id: 999999 });
      expect(rulesBroken(unknown)).toEqual(['candidacy_id:existing_candidacy']);
    });

    it("shows the candidacy's situation, and its result once the court's file has it", async () => {
      const owner = await createUser(app);
      const created = await add(app, owner, { nome: "João d'Ávila da Silva", candidacy_id: JOAO });
      const id = created.body.data.id;
      expect(created.body.data.candidacy).toMatchObject({ situacao_candidatura: { code: 12, label: 'APTO' }, sit_tot_turno: null });
      await setResult(app, JOAO, 1);
      expect((await read(app, owner, id)).body.data.candidacy).toMatchObject({ situacao_candidatura: { code: 12, label: 'APTO' }, sit_tot_turno: { code: 1, label: 'ELEITO' } });
      await setResult(app, JOAO, null);
    });
  });

  describe("addEntity's checks by the court's tables", () => {
    it("refuses a ballot number of the wrong length for the office that position names, accents, case and feminine forms aside", async () => {
      const mayor = await add(app, carlos, { nome: 'Maria Prefeita', position: 'Prefeita', nr_urna: 13123, partido: '13' });
      expect(rulesBroken(mayor)).toEqual(['nr_urna:ballot_digits']);
      expect(mayor.body.error.details[0]).toEqual({
        location: 'body', field: 'nr_urna', rule: 'ballot_digits', message: 'must have 2 digits, as ballot numbers for PREFEITO have (position Prefeita)', value: 13123,
      });
      expect(rulesBroken(await add(app, carlos, { nome: 'Vice', position: 'vice-prefeito', nr_urna: 131, partido: '13' }))).toEqual(['nr_urna:ballot_digits']);
      expect(rulesBroken(await add(app, carlos, { nome: 'Vereador', position: 'VEREADOR', nr_urna: 13, partido: '13' }))).toEqual(['nr_urna:ballot_digits']);
      expect(rulesBroken(await add(app, carlos, { nome: 'Deputada', position: 'Deputada Federal', nr_urna: 131, partido: '13' }))).toEqual(['nr_urna:ballot_digits']);

      for (const [position, nr_urna] of [['prefeito', 13], ['Vereadora', 13123], ['deputado federal', 1311], ['Deputado Estadual', 45000]] as const) {
        const accepted = await add(app, carlos, { nome: `Aceito (${position})`, position, nr_urna, partido: String(nr_urna).slice(0, 2) });
        expect(accepted.status, `${position}: ${accepted.text}`).toBe(201);
      }
      // A position the court's offices do not name is not judged.
      expect((await add(app, carlos, { nome: 'Coordenadora', position: 'coordenadora de campanha', nr_urna: 13123, partido: '13' })).status).toBe(201);
    });

    it("refuses a party that could not run in the office's latest election, naming the registered parties that could", async () => {
      // Issue 42: the registered parties judge, not the imported candidacies' (PTB merged into PRD in 2023).
      const answer = await add(app, carlos, { nome: 'Partido Trabalhista', position: 'prefeito', nr_urna: 14, partido: '14' });
      expect(rulesBroken(answer)).toEqual(['nr_urna:party_of_election', 'partido:party_of_election']);
      const parties = partiesRunningOn(REGISTERED_PARTIES, '2024-10-06').map((party) => `${party.nr_partido} ${party.sg_partido}`).join(', ');
      const election = 'registered with the TSE that could run in Eleições Municipais 2024 (2024, round 1, 2024-10-06)';
      expect(answer.body.error.details).toEqual([
        { location: 'body', field: 'nr_urna', rule: 'party_of_election', message: `must start with the number of a party ${election}: ${parties}`, value: 14 },
        { location: 'body', field: 'partido', rule: 'party_of_election', message: `must be the number of a party ${election}: ${parties}`, value: '14' },
      ]);
      // NOVO is registered, though no imported 2024 candidacy names it.
      expect((await add(app, carlos, { nome: 'Partido Novo', position: 'prefeito', nr_urna: 30, partido: '30' })).status).toBe(201);
      // NOVO runs in the 2022 state election: a state deputy may carry it.
      expect((await add(app, carlos, { nome: 'Deputado do Novo', position: 'deputado estadual', nr_urna: 30123, partido: '30' })).status).toBe(201);
    });

    it("judges by the linked candidacy's office and election before position's", async () => {
      const owner = await createUser(app);
      const linked = await add(app, owner, { nome: "João d'Ávila", position: 'prefeito', nr_urna: 50, partido: '50', candidacy_id: JOAO });
      expect(rulesBroken(linked)).toEqual(['nr_urna:ballot_digits']);
      expect(linked.body.error.details[0].message).toBe(`must have 5 digits, as ballot numbers for VEREADOR have (candidacy ${JOAO})`);
      expect((await add(app, owner, { nome: "João d'Ávila", position: 'prefeito', nr_urna: 50123, partido: '50', candidacy_id: JOAO })).status).toBe(201);
    });

    it('judges the ballot number of the entity as it will be when an update names what sets its office', async () => {
      const owner = await createUser(app);
      const created = await add(app, owner, { nome: 'Candidata', nr_urna: 13123, partido: '13' });
      expect(created.status, created.text).toBe(201);
      const id = created.body.data.id;
      // An update that names none of them is not judged by them.
      expect((await add(app, owner, { id, nome: 'Candidata', cidade: 'Campinas' })).status).toBe(200);
      expect(rulesBroken(await add(app, owner, { id, nome: 'Candidata', position: 'prefeita' }))).toEqual(['nr_urna:ballot_digits']);
      expect((await add(app, owner, { id, nome: 'Candidata', position: 'vereadora' })).status).toBe(200);
    });

    it("judges a coalition's parties by those running in its election, and by the parties registered today without one", async () => {
      // PTB ran in 2022: a 2022 coalition keeps it, created from the candidacy or typed.
      const created = await fromCandidacy(app, await createUser(app), RENATA);
      expect(created.status, created.text).toBe(201);
      expect(created.body.data).toMatchObject({ asLegenda: true, nomeLegenda: 'SÃO PAULO PARA TODOS', partidosLegenda: ['NOVO', 'PTB'], candidacy_id: RENATA });
      expect(created.body.message).toBe(`Entity ${created.body.data.id} created from candidacy ${RENATA}.`);
      expect((await add(app, carlos, { nome: 'Governador de 2022', position: 'governador', partidosLegenda: ['NOVO', 'PTB'] })).status).toBe(201);

      // A 2024 mayor's coalition: the parties of that election, acronyms compared without accents, case or spaces.
      const mayor = await add(app, carlos, { nome: 'Prefeito de 2024', position: 'prefeito', partidosLegenda: ['PSB', 'PTB', 'Patriota'] });
      expect(rulesBroken(mayor)).toEqual(['partidosLegenda.1:party_of_election', 'partidosLegenda.2:party_of_election']);
      const parties = partiesRunningOn(REGISTERED_PARTIES, '2024-10-06').map((party) => `${party.nr_partido} ${party.sg_partido}`).join(', ');
      expect(mayor.body.error.details[0]).toEqual({
        location: 'body', field: 'partidosLegenda.1', rule: 'party_of_election', value: 'PTB',
        message: `must be the acronym of a party registered with the TSE that could run in Eleições Municipais 2024 (2024, round 1, 2024-10-06): ${parties}`,
      });
      expect((await add(app, carlos, { nome: 'Prefeito de 2024', position: 'prefeito', partidosLegenda: ['pt', 'PC do B', 'pv', 'Psb'] })).status).toBe(201);
      // An update naming the coalition alone is judged in the stored entity's election.
      const id = (await add(app, carlos, { nome: 'Prefeita', position: 'prefeita' })).body.data.id;
      expect(rulesBroken(await add(app, carlos, { id, nome: 'Prefeita', partidosLegenda: ['PTB'] }))).toEqual(['partidosLegenda.0:party_of_election']);

      // Without an office the court's data names, the parties registered today judge it.
      const unplaced = await add(app, carlos, { nome: 'Sem cargo', partidosLegenda: ['PTB', 'NOVO'] });
      expect(rulesBroken(unplaced)).toEqual(['partidosLegenda.0:registered_party']);
    });

    it("refuses a code the court's table lacks, listing a short table's codes and naming a long one's", async () => {
      const answer = await add(app, carlos, { nome: 'Códigos', instrucao: 1, estado_civil: 4, raca: 9, nacionalidade: 7, ocupacao: 12345 });
      expect(rulesBroken(answer)).toEqual(['estado_civil:court_code', 'instrucao:court_code', 'nacionalidade:court_code', 'ocupacao:court_code', 'raca:court_code']);
      const byField = Object.fromEntries(answer.body.error.details.map((detail: Json) => [detail.field, detail]));
      expect(byField.estado_civil).toEqual({
        location: 'body', field: 'estado_civil', rule: 'court_code', value: 4,
        message: "must be a code of the court's table estado_civil: 1 SOLTEIRO(A), 3 CASADO(A), 5 VIÚVO(A), 7 SEPARADO(A) JUDICIALMENTE, 9 DIVORCIADO(A)",
      });
      expect(byField.instrucao.message).toBe("must be a code of the court's table grau_instrucao: 2 LÊ E ESCREVE, 6 ENSINO MÉDIO COMPLETO, 7 SUPERIOR INCOMPLETO, 8 SUPERIOR COMPLETO");
      expect(byField.raca.message).toContain("table cor_raca: 1 BRANCA, 2 PRETA, 3 PARDA");
      expect(byField.ocupacao.message).toBe(`must be a code of the court's table ocupacao (${OCCUPATIONS.length} codes): getElectionCodes lists them, GET /api/elections/codes/?table=ocupacao`);
      expect((await add(app, carlos, { nome: 'Códigos', instrucao: 8, estado_civil: 3, raca: 3, nacionalidade: 1, ocupacao: 257, genero: 'não binário' })).status).toBe(201);
    });
  });
});

// --- without the court's data ------------------------------------------------------------------------

describe("without the court's data", () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await createUser(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('accepts what it accepted before: any ballot-number length, party and code', async () => {
    const body = { nome: 'Maria da Silva Santos', position: 'prefeito', tipoDisputa: 'municipal', nr_urna: 13123, partido: '13', instrucao: 1, estado_civil: 4, raca: 9, nacionalidade: 7, ocupacao: 12345 };
    const created = await add(app, owner, body);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject(body);
    // The rule of every install still holds: a ballot number starts with its party's number.
    expect(rulesBroken(await add(app, owner, { nome: 'Outro', nr_urna: 45123, partido: '13' }))).toEqual(['nr_urna:party_prefix']);
    // And there is no candidacy to create from or link to.
    expectError(await fromCandidacy(app, owner, MARIA), 404, 'not_found');
    expect(rulesBroken(await add(app, owner, { id: created.body.data.id, nome: 'Maria da Silva Santos', candidacy_id: MARIA }))).toEqual(['candidacy_id:existing_candidacy']);
  });

  it("stores the 13-digit título of an older São Paulo voter, which @brazilian-utils accepts, and refuses one of another state", async () => {
    // 13 digits: a 9-digit sequence, the state (01, São Paulo) and the two check digits.
    const created = await add(app, owner, { nome: 'Eleitor Antigo', titulo_eleitor: '1234567890191' });
    expect(created.status, created.text).toBe(201);
    expect((await read(app, owner, created.body.data.id)).body.data.titulo_eleitor).toBe('1234567890191');
    expect(rulesBroken(await add(app, owner, { nome: 'Eleitor Errado', titulo_eleitor: '1234567890192' }))).toEqual(['titulo_eleitor:voter_id_check_digits']);
    // Bahia (05) has no 13-digit títulos.
    expect(rulesBroken(await add(app, owner, { nome: 'Eleitor Baiano', titulo_eleitor: '1234567890505' }))).toEqual(['titulo_eleitor:voter_id_check_digits']);
    // Digits only, 12 or 13 of them.
    const tooLong = await add(app, owner, { nome: 'Eleitor Longo', titulo_eleitor: '12345678901910' });
    expectError(tooLong, 422, 'validation_failed');
    expect(tooLong.body.error.details.map((detail: Json) => detail.field)).toContain('titulo_eleitor');
  });
});
