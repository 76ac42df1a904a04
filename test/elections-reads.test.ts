/**
 * The reads of the electoral court's data (issue 22): listElections, listElectionOffices,
 * listElectionParties, getElectionCodes, searchCandidacies (each filter, pagination keeping them) and
 * getCandidacy (labels, and personal data masked by role), with their ETags and 304s, and the errors
 * naming the parameter. The tables are filled straight through the models (test/helpers/court-data.ts).
 * On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { CANDIDACIES, ELECTIONS, linkEntity, loadCourtSample, markImported } from './helpers/court-data.js';
import { expectError, request, type Result } from './helpers/http.js';
import { defineCourtModels } from '../src/elections/tse/models.js';
import { searchableName } from '../src/elections/tse/names.js';

let app: TestApp;
let user: TestUser;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  await loadCourtSample(app.sequelize);
  user = await createUser(app);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

const get = (path: string, caller: TestUser = user, headers: Record<string, string> = {}): Promise<Result> => request(app.baseUrl, 'GET', path, { ...caller.headers, ...headers });

/** The ids of a search's results, in order. */
async function found(query: string): Promise<number[]> {
  const answer = await get(`/api/elections/candidacies/?${query}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.results.map((result: { id: number }) => result.id);
}

/** The answer is 400 bad_request naming the query parameter `field` with `rule`. */
function expectBadQuery(answer: Result, field: string, rule?: string): void {
  expectError(answer, 400, 'bad_request');
  expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'query', field, ...(rule ? { rule } : {}) })]);
}

const ELECTION_2024 = { cd_eleicao: 619, ano: 2024, tipo_eleicao: { code: 2, label: 'ELEIÇÃO ORDINÁRIA' }, nr_turno: 1, ds_eleicao: 'Eleições Municipais 2024', dt_eleicao: '2024-10-06', tp_abrangencia: 'MUNICIPAL' };

describe('elections, offices, parties and code tables', () => {
  it('lists the elections, the newest first, by year and by scope', async () => {
    const all = await get('/api/elections/');
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((election: { cd_eleicao: number }) => election.cd_eleicao)).toEqual([619, 544, 546]);
    expect(all.body.data[0]).toEqual(ELECTION_2024);
    expect(all.body.message).toBe('3 elections.');
    expect((await get('/api/elections/?ano=2022')).body.data.map((election: { cd_eleicao: number }) => election.cd_eleicao)).toEqual([544, 546]);
    expect((await get('/api/elections/?abrangencia=MUNICIPAL')).body.data).toEqual([ELECTION_2024]);
    expect((await get('/api/elections/?ano=2020')).body.data).toEqual([]);
    expectBadQuery(await get('/api/elections/?ano=dois-mil'), 'ano');
    expectBadQuery(await get('/api/elections/?abrangencia=NACIONAL'), 'abrangencia');
  });

  it('lists the offices with the digits of their ballot numbers', async () => {
    const offices = await get('/api/elections/offices/');
    expect(offices.status, offices.text).toBe(200);
    expect(offices.body.data).toHaveLength(13);
    expect(offices.body.data).toEqual(
      expect.arrayContaining([
        { cd_cargo: 1, ds_cargo: 'PRESIDENTE', ballot_digits: 2 },
        { cd_cargo: 5, ds_cargo: 'SENADOR', ballot_digits: 3 },
        { cd_cargo: 6, ds_cargo: 'DEPUTADO FEDERAL', ballot_digits: 4 },
        { cd_cargo: 11, ds_cargo: 'PREFEITO', ballot_digits: 2 },
        { cd_cargo: 13, ds_cargo: 'VEREADOR', ballot_digits: 5 },
      ]),
    );
  });

  it("lists an election's parties and its federations with their parties", async () => {
    const parties = await get(`/api/elections/parties/?cd_eleicao=${ELECTIONS.municipal2024}`);
    expect(parties.status, parties.text).toBe(200);
    expect(parties.body.data.eleicao).toEqual(ELECTION_2024);
    expect(parties.body.data.partidos.map((party: { sg_partido: string }) => party.sg_partido)).toEqual(['PT', 'MDB', 'REDE', 'CIDADANIA', 'PSB', 'PV', 'PSDB', 'PSOL', 'PSD', 'PC do B']);
    expect(parties.body.data.partidos[0]).toEqual({ nr_partido: 13, sg_partido: 'PT', nm_partido: 'Partido dos Trabalhadores', nr_federacao: 1 });
    expect(parties.body.data.federacoes).toEqual([
      { nr_federacao: 1, sg_federacao: 'FE BRASIL', nm_federacao: 'Federação Brasil da Esperança - FE BRASIL', partidos: [13, 43, 65] },
      { nr_federacao: 2, sg_federacao: 'PSDB CIDADANIA', nm_federacao: 'Federação PSDB Cidadania', partidos: [23, 45] },
      { nr_federacao: 3, sg_federacao: 'PSOL REDE', nm_federacao: 'Federação PSOL REDE', partidos: [18, 50] },
    ]);
    expect(parties.body.message).toBe('10 parties and 3 federations in Eleições Municipais 2024.');
    // The president's election had only one federation of the three.
    expect((await get(`/api/elections/parties/?cd_eleicao=${ELECTIONS.federal2022}`)).body.data.federacoes.map((federation: { nr_federacao: number }) => federation.nr_federacao)).toEqual([1]);

    const unknown = await get('/api/elections/parties/?cd_eleicao=999');
    expectError(unknown, 404, 'not_found');
    expect(unknown.body.error.details).toEqual([{ location: 'query', field: 'cd_eleicao', rule: 'existing_election', message: expect.any(String), value: 999 }]);
    expectBadQuery(await get('/api/elections/parties/'), 'cd_eleicao', 'required');
    expectBadQuery(await get('/api/elections/parties/?cd_eleicao=0'), 'cd_eleicao');
  });

  it('gives every code table with its labels, or one of them', async () => {
    const all = await get('/api/elections/codes/');
    expect(all.status, all.text).toBe(200);
    expect(Object.keys(all.body.data)).toEqual(['tipo_eleicao', 'genero', 'grau_instrucao', 'estado_civil', 'cor_raca', 'ocupacao', 'nacionalidade', 'situacao_candidatura', 'sit_tot_turno']);
    expect(all.body.data.genero).toEqual([{ code: 2, label: 'MASCULINO' }, { code: 4, label: 'FEMININO' }]);
    expect(all.body.data.sit_tot_turno).toContainEqual({ code: 6, label: '2º TURNO' });
    const race = await get('/api/elections/codes/?table=cor_raca');
    expect(race.body.data).toEqual({
      cor_raca: [
        { code: 1, label: 'BRANCA' },
        { code: 2, label: 'PRETA' },
        { code: 3, label: 'PARDA' },
        { code: 4, label: 'AMARELA' },
        { code: 5, label: 'INDÍGENA' },
        { code: 6, label: 'NÃO INFORMADO' },
      ],
    });
    expect(race.body.message).toBe('1 code table.');
    expectBadQuery(await get('/api/elections/codes/?table=religiao'), 'table');
  });
});

describe('searchCandidacies', () => {
  it('finds by name ignoring case, accents and apostrophes, the words in order', async () => {
    // Ordered by civil name: LUCIANA MARIA DA SILVA before MARIA DA SILVA SANTOS.
    expect(await found('nome=maria')).toEqual([CANDIDACIES.federalDeputy, CANDIDACIES.maria]);
    expect(await found('nome=Maria%20Santos')).toEqual([CANDIDACIES.maria]);
    expect(await found(`nome=${encodeURIComponent("JOÃO D'Ávila")}`)).toEqual([CANDIDACIES.joaoDavila]);
    expect(await found('nome=joao%20davila')).toEqual([CANDIDACIES.joaoDavila]);
    expect(await found("nome=jo%C3%A3o%20d'avila")).toEqual([CANDIDACIES.joaoDavila]); // the apostrophe unencoded, as encodeURIComponent leaves it
    expect(await found('nome=ze%20carlos')).toEqual([CANDIDACIES.governor]); // the ballot name ZÉ CARLOS
    expect(await found('nome=santos%20maria%20silva')).toEqual([]); // the words in their order
    expect(await found('nome=luciana%20saude')).toEqual([CANDIDACIES.federalDeputy]);
    expect(await found('nome=100%25')).toEqual([]); // LIKE's wildcards are punctuation here
  });

  it('finds by ballot number, party (number or acronym), office, state, municipality and election', async () => {
    expect(await found('nr_candidato=45')).toEqual([CANDIDACIES.joaoFerreira, CANDIDACIES.governor]);
    expect(await found('nr_candidato=1311')).toEqual([CANDIDACIES.federalDeputy]);
    expect(await found('partido=13')).toEqual([CANDIDACIES.federalDeputy, CANDIDACIES.maria]);
    expect(await found('partido=PT')).toEqual([CANDIDACIES.federalDeputy, CANDIDACIES.maria]);
    expect(await found('partido=psdb')).toEqual([CANDIDACIES.joaoFerreira, CANDIDACIES.governor, CANDIDACIES.marcos]);
    expect(await found('partido=pc%20do%20b')).toEqual([]); // a party of the elections, without candidacies here
    expect(await found('partido=PCdoB')).toEqual([]);
    expect(await found(`partido=NOVO&cd_eleicao=${ELECTIONS.federal2022}`)).toEqual([CANDIDACIES.president]);
    expect(await found('cd_cargo=11')).toEqual([CANDIDACIES.ana, CANDIDACIES.joaoFerreira, CANDIDACIES.maria]);
    expect(await found('uf=MG')).toEqual([CANDIDACIES.ana]);
    expect(await found('uf=BR')).toEqual([CANDIDACIES.president]);
    expect(await found('codigo_ibge=3550308')).toEqual([CANDIDACIES.joaoFerreira, CANDIDACIES.joaoDavila, CANDIDACIES.maria]);
    expect(await found('codigo_ibge=3509502')).toEqual([CANDIDACIES.marcos]);
    expect(await found('codigo_ibge=3304557')).toEqual([]); // Rio de Janeiro: no candidacies loaded
    expect(await found(`cd_eleicao=${ELECTIONS.state2022}`)).toEqual([CANDIDACIES.governor, CANDIDACIES.federalDeputy, CANDIDACIES.stateDeputy]);
  });

  it('combines the filters, and lists summaries without personal data', async () => {
    const mayors = await get(`/api/elections/candidacies/?cd_eleicao=${ELECTIONS.municipal2024}&cd_cargo=11&codigo_ibge=3550308`);
    expect(mayors.status, mayors.text).toBe(200);
    expect(mayors.body.data).toEqual({
      links: { next: null, previous: null },
      count: 2,
      total_pages: 1,
      results: [
        expect.objectContaining({ id: CANDIDACIES.joaoFerreira, nr_candidato: 45 }),
        {
          id: CANDIDACIES.maria,
          cd_eleicao: 619,
          ano: 2024,
          sq_candidato: '250002024501',
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
      ],
    });
    expect(mayors.body.message).toBe('2 candidacies.');
    expect(mayors.text).not.toMatch(/52998224725|529\.982|102345670183|cor_raca|1978-05-14/);
    expect(await found('uf=SP&cd_cargo=13&partido=PSOL')).toEqual([CANDIDACIES.joaoDavila]);
    expect(await found(`nome=silva&cd_eleicao=${ELECTIONS.municipal2024}`)).toEqual([CANDIDACIES.joaoDavila, CANDIDACIES.maria]);
    // A state deputy's situation without the round's result.
    const inapt = await get(`/api/elections/candidacies/?nr_candidato=30777`);
    expect(inapt.body.data.results[0]).toMatchObject({ situacao_candidatura: { code: 3, label: 'INAPTO' }, sit_tot_turno: null });
  });

  it('pages by 30, the links keeping every filter', async () => {
    const { Candidacy } = defineCourtModels(app.sequelize);
    const councillors = Array.from({ length: 35 }, (_, index) => {
      const name = `CANDIDATA TESTE ${String(index + 1).padStart(2, '0')}`;
      return {
        cd_eleicao: ELECTIONS.municipal2024, sq_candidato: `25000209${String(index).padStart(4, '0')}`, sg_uf: 'SP', sg_ue: '62910', cd_cargo: 13,
        nr_candidato: 50200 + index, nm_candidato: name, nm_urna_candidato: name, nm_busca: searchableName(name, name), nr_partido: 50,
        row_hash: `hash-${index}`, updated_at: new Date(),
      };
    });
    await Candidacy.bulkCreate(councillors);
    try {
      const first = await get('/api/elections/candidacies/?nome=teste&uf=SP&partido=PSOL');
      expect(first.status, first.text).toBe(200);
      expect(first.body.data).toMatchObject({ count: 35, total_pages: 2, links: { previous: null } });
      expect(first.body.data.results).toHaveLength(30);
      expect(first.body.data.results[0].nm_candidato).toBe('CANDIDATA TESTE 01');
      const next = new URL(first.body.data.links.next);
      expect(next.pathname).toBe('/api/elections/candidacies/');
      expect(Object.fromEntries(next.searchParams)).toEqual({ nome: 'teste', uf: 'SP', partido: 'PSOL', page: '2' });

      const second = await get(`${next.pathname}${next.search}`);
      expect(second.status, second.text).toBe(200);
      expect(second.body.data.results.map((result: { nm_candidato: string }) => result.nm_candidato)).toEqual(['31', '32', '33', '34', '35'].map((n) => `CANDIDATA TESTE ${n}`));
      expect(second.body.data.links.next).toBeNull();
      expect(Object.fromEntries(new URL(second.body.data.links.previous).searchParams)).toEqual({ nome: 'teste', uf: 'SP', partido: 'PSOL', page: '1' });

      const past = await get('/api/elections/candidacies/?nome=teste&uf=SP&partido=PSOL&page=3');
      expectError(past, 404, 'not_found');
      expect(past.body.error.details).toEqual([expect.objectContaining({ field: 'page', rule: 'max_page', value: 3 })]);
    } finally {
      await Candidacy.destroy({ where: { nm_candidato: councillors.map((row) => row.nm_candidato) } });
    }
  });

  it('answers 400 naming the parameter of a bad filter', async () => {
    expectBadQuery(await get(`/api/elections/candidacies/?nome=${encodeURIComponent("a'")}`), 'nome', 'min_letters');
    expectBadQuery(await get('/api/elections/candidacies/?nome=%20-%20'), 'nome', 'min_letters');
    const party = await get('/api/elections/candidacies/?partido=PXT');
    expectBadQuery(party, 'partido', 'known_party');
    expect(party.body.error.message).toBe('No loaded election has a party with the acronym PXT.');
    // REDE ran in 2024, not in the president's election.
    expect((await get(`/api/elections/candidacies/?partido=REDE&cd_eleicao=${ELECTIONS.federal2022}`)).body.error.message).toBe('Election 544 has no party with the acronym REDE.');
    expectBadQuery(await get('/api/elections/candidacies/?uf=XX'), 'uf');
    expectBadQuery(await get('/api/elections/candidacies/?nr_candidato=7'), 'nr_candidato');
    expectBadQuery(await get('/api/elections/candidacies/?codigo_ibge=355030'), 'codigo_ibge');
    expectBadQuery(await get('/api/elections/candidacies/?cd_cargo=prefeito'), 'cd_cargo');
    expectBadQuery(await get('/api/elections/candidacies/?cd_eleicao=-1'), 'cd_eleicao');
    expectBadQuery(await get('/api/elections/candidacies/?page=0'), 'page');
    expectBadQuery(await get('/api/elections/candidacies/?ano=2024'), 'ano');
  });

  it('needs a key', async () => {
    expectError(await request(app.baseUrl, 'GET', '/api/elections/candidacies/?nome=maria'), 401, 'unauthorized');
    expectError(await request(app.baseUrl, 'GET', `/api/elections/candidacy/?id=${CANDIDACIES.maria}`), 401, 'unauthorized');
  });
});

describe('getCandidacy', () => {
  const MARIA_MASKED = {
    id: CANDIDACIES.maria,
    sq_candidato: '250002024501',
    eleicao: ELECTION_2024,
    cargo: { cd_cargo: 11, ds_cargo: 'PREFEITO', ballot_digits: 2 },
    sg_uf: 'SP',
    unidade: { sg_ue: '71072', nm_ue: 'SÃO PAULO', codigo_ibge: 3550308 },
    municipio: { codigo_ibge: 3550308, nome: 'São Paulo' },
    nr_candidato: 13,
    nm_candidato: 'MARIA DA SILVA SANTOS',
    nm_urna_candidato: 'MARIA SANTOS',
    partido: { nr_partido: 13, sg_partido: 'PT', nm_partido: 'Partido dos Trabalhadores' },
    federacao: { nr_federacao: 1, sg_federacao: 'FE BRASIL', nm_federacao: 'Federação Brasil da Esperança - FE BRASIL' },
    coligacao: { sq_coligacao: '250002000101', nm_coligacao: 'SÃO PAULO DE TODOS', ds_composicao: 'Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV) / PSB' },
    cpf: '***.982.247-**',
    titulo_eleitor: '********0183',
    data_nascimento: '1978-05-14',
    uf_nascimento: 'SP',
    // The 2024 layout has no nationality, birthplace or re-election columns (court-file.ts).
    municipio_nascimento: null,
    nacionalidade: null,
    genero: { code: 4, label: 'FEMININO' },
    grau_instrucao: { code: 8, label: 'SUPERIOR COMPLETO' },
    estado_civil: { code: 3, label: 'CASADO(A)' },
    ocupacao: { code: 131, label: 'ADVOGADO' },
    situacao_candidatura: { code: 12, label: 'APTO' },
    sit_tot_turno: { code: 6, label: '2º TURNO' },
    reeleicao: null,
    personal_data: 'masked',
    updated_at: '2024-10-07T03:00:00.000Z',
  };
  const MARIA_WHOLE = { ...MARIA_MASKED, cpf: '529.982.247-25', titulo_eleitor: '102345670183', cor_raca: { code: 3, label: 'PARDA' }, personal_data: 'whole' };

  it('gives every code with its label, masking personal data for a user who manages no linked entity', async () => {
    const answer = await get(`/api/elections/candidacy/?id=${CANDIDACIES.maria}`);
    expect(answer.status, answer.text).toBe(200);
    // The unit's municipality as the IBGE list names it.
    expect(answer.body.data).toEqual(MARIA_MASKED);
    expect(answer.body.data).not.toHaveProperty('cor_raca');
    expect(answer.body.message).toBe('MARIA SANTOS (13), PREFEITO in SÃO PAULO, Eleições Municipais 2024.');
  });

  it('shows personal data whole to platform admins only: not to the owner, admins or operators of a linked entity', async () => {
    const admin = await createAdmin(app);
    expect((await get(`/api/elections/candidacy/?id=${CANDIDACIES.maria}`, admin)).body.data).toEqual(MARIA_WHOLE);

    // Anyone may link an entity to any candidacy (a competitor's too): a link says nothing about the caller.
    const owner = await createUser(app);
    const teamAdmin = await createUser(app);
    const operator = await createUser(app);
    const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria da Silva Santos' });
    const { Member } = app.entities.models;
    await Member.create({ entity_id: entityId, user_id: teamAdmin.user.id, role: 'admin', added_at: new Date() });
    await Member.create({ entity_id: entityId, user_id: operator.user.id, role: 'operator', added_at: new Date() });
    await linkEntity(app.sequelize, entityId, CANDIDACIES.maria);
    try {
      for (const caller of [owner, teamAdmin, operator, user]) {
        const answer = await get(`/api/elections/candidacy/?id=${CANDIDACIES.maria}`, caller);
        expect(answer.body.data).toEqual(MARIA_MASKED);
        expect(answer.text).not.toMatch(/52998224725|529\.982\.247-25|102345670183|PARDA/);
      }
      // An admin who is also in the team reads it whole, as a platform admin.
      await Member.create({ entity_id: entityId, user_id: admin.user.id, role: 'viewer', added_at: new Date() });
      expect((await get(`/api/elections/candidacy/?id=${CANDIDACIES.maria}`, admin)).body.data.personal_data).toBe('whole');
    } finally {
      await linkEntity(app.sequelize, entityId, null);
    }
  });

  it('gives null for what the file withholds, and a general election without a municipality', async () => {
    const admin = await createAdmin(app);
    const withheld = await get(`/api/elections/candidacy/?id=${CANDIDACIES.joaoDavila}`, admin);
    expect(withheld.body.data).toMatchObject({ cpf: null, titulo_eleitor: null, data_nascimento: null, uf_nascimento: null, coligacao: null, federacao: { nr_federacao: 3 }, personal_data: 'whole' });
    const president = await get(`/api/elections/candidacy/?id=${CANDIDACIES.president}`);
    expect(president.body.data).toMatchObject({
      eleicao: { cd_eleicao: 544, tp_abrangencia: 'FEDERAL' },
      cargo: { cd_cargo: 1, ds_cargo: 'PRESIDENTE', ballot_digits: 2 },
      sg_uf: 'BR',
      unidade: { sg_ue: 'BR', nm_ue: 'BRASIL', codigo_ibge: null },
      municipio: null,
      federacao: null,
      titulo_eleitor: '********0116',
    });
  });

  it('answers 404 naming the id of an unknown candidacy, and 400 for a missing or malformed one', async () => {
    const unknown = await get('/api/elections/candidacy/?id=99999');
    expectError(unknown, 404, 'not_found');
    expect(unknown.body.error.details).toEqual([{ location: 'query', field: 'id', rule: 'existing_candidacy', message: expect.any(String), value: 99999 }]);
    expectError(await get('/api/elections/candidacy/?id=9999999999'), 404, 'not_found');
    expectBadQuery(await get('/api/elections/candidacy/'), 'id', 'required');
    expectBadQuery(await get('/api/elections/candidacy/?id=maria'), 'id');
  });
});

describe('ETags', () => {
  it('answers 304 to If-None-Match while the data is unchanged, and 200 with a new tag once an import wrote', async () => {
    for (const path of ['/api/elections/', '/api/elections/offices/', `/api/elections/parties/?cd_eleicao=${ELECTIONS.municipal2024}`, '/api/elections/codes/', '/api/elections/candidacies/?uf=SP', `/api/elections/candidacy/?id=${CANDIDACIES.maria}`]) {
      const first = await get(path);
      expect(first.status, `${path}: ${first.text}`).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag, path).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
      expect(first.headers.get('cache-control')).toBe('private, no-cache');
      const again = await get(path, user, { 'If-None-Match': etag });
      expect(again.status, path).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      expect((await get(path, user, { 'If-None-Match': 'W/"another-version"' })).status).toBe(200);
    }
  });

  it('moves on when an import writes, and differs by query and by the view of personal data', async () => {
    const admin = await createAdmin(app);
    const tag = async (path: string, caller: TestUser = user) => (await get(path, caller)).headers.get('etag');
    const before = await tag('/api/elections/');
    expect(await tag('/api/elections/?ano=2024')).not.toBe(before);
    expect(await tag('/api/elections/candidacies/?uf=SP')).not.toBe(await tag('/api/elections/candidacies/?uf=SP&nome=maria'));
    // The whole and the masked view of one candidacy are two representations.
    const candidacy = `/api/elections/candidacy/?id=${CANDIDACIES.maria}`;
    const masked = await tag(candidacy);
    expect(await tag(candidacy, admin)).not.toBe(masked);
    const stale = await get(candidacy, admin, { 'If-None-Match': masked! });
    expect(stale.status).toBe(200);
    expect(stale.body.data.personal_data).toBe('whole');

    await markImported(app.sequelize, new Date(Date.UTC(2030, 0, 1)));
    const after = await get('/api/elections/', user, { 'If-None-Match': before! });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect((await get(candidacy, user, { 'If-None-Match': masked! })).status).toBe(200);
  });
});
