/**
 * The parties registered with the electoral court as reference data of their own (issue 42, section 7):
 * the table migration 0037 seeds (its source named on every row), listRegisteredParties (all, or those
 * existing on a day), the rule of who may run on an election's day (Lei 9.504/1997 art. 4º), and the
 * entity rules judging a 2024 candidate's party by the registered parties, not by the parties the
 * imported candidacies happen to name: a court file with only MDB and PT candidacies no longer refuses
 * PL 22 or PRD 25, and still refuses PTB 14 (merged into PRD in 2023); and the stateful msw mock answering
 * listRegisteredParties from the same list. On SQLite, and on PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request, type Result } from './helpers/http.js';
import { defineCourtModels } from '../src/elections/tse/models.js';
import { courtReferenceOf } from '../src/elections/tse/reference.js';
import { COVERED_FROM, REGISTERED_PARTIES, monthsBefore, partiesRegisteredOn, partiesRunningOn } from '@palanque/rules/registered-parties';
import { setupServer } from 'msw/node';
import { createApiClient, login } from '../sdk/index.js';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../sdk/msw.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const acronyms = (parties: ReadonlyArray<{ sg_partido: string }>) => parties.map((party) => party.sg_partido);

describe('the registered parties (pure rules, shared with the msw mock)', () => {
  it('knows which parties existed on a day: mergers and incorporations end a party, a reused number names one party a day', () => {
    const on2022Election = acronyms(partiesRegisteredOn(REGISTERED_PARTIES, '2022-10-02'));
    expect(on2022Election).toEqual(expect.arrayContaining(['PTB', 'PATRIOTA', 'PROS', 'PSC', 'UNIÃO']));
    expect(on2022Election).not.toEqual(expect.arrayContaining(['PSL']));
    expect(on2022Election).not.toContain('DEM');
    expect(on2022Election).not.toContain('PRD');

    const on2024Election = acronyms(partiesRegisteredOn(REGISTERED_PARTIES, '2024-10-06'));
    expect(on2024Election).toEqual(expect.arrayContaining(['PL', 'PRD', 'UNIÃO', 'SOLIDARIEDADE', 'PODE']));
    for (const gone of ['PTB', 'PATRIOTA', 'PROS', 'PSC', 'PSL', 'DEM', 'MISSÃO']) expect(on2024Election).not.toContain(gone);
    expect(on2024Election).toHaveLength(29); // the court counted 29 in July 2025, before Missão

    // 25 was DEM's until 8 February 2022 and is PRD's since 9 November 2023; 14 was PTB's, then Missão's.
    const numbered = (day: string, number: number) => partiesRegisteredOn(REGISTERED_PARTIES, day).filter((party) => party.nr_partido === number).map((party) => party.sg_partido);
    expect(numbered('2022-02-07', 25)).toEqual(['DEM']);
    expect(numbered('2022-02-08', 25)).toEqual([]);
    expect(numbered('2023-11-09', 25)).toEqual(['PRD']);
    expect(numbered('2023-11-08', 14)).toEqual(['PTB']);
    expect(numbered('2026-10-04', 14)).toEqual(['MISSÃO']);
    for (const day of ['2020-01-01', '2022-02-08', '2023-06-15', '2024-10-06', '2026-10-04']) {
      const numbers = partiesRegisteredOn(REGISTERED_PARTIES, day).map((party) => party.nr_partido);
      expect(new Set(numbers).size, day).toBe(numbers.length);
    }
    expect(partiesRegisteredOn(REGISTERED_PARTIES, '2020-01-01')).toHaveLength(33);
    expect(partiesRegisteredOn(REGISTERED_PARTIES, '2019-12-31')).toEqual([]);
    expect(COVERED_FROM).toBe('2020-01-01');
  });

  it('lets a party run only when registered six months before the election day (Lei 9.504/1997 art. 4º)', () => {
    expect(monthsBefore('2024-10-06', 6)).toBe('2024-04-06');
    expect(monthsBefore('2024-08-31', 6)).toBe('2024-02-29');
    const running2024 = acronyms(partiesRunningOn(REGISTERED_PARTIES, '2024-10-06'));
    expect(running2024).toContain('PRD'); // registered 2023-11-09, eleven months before
    // A party registered five months before an election could not run in it.
    const late = [{ nr_partido: 99, sg_partido: 'TARDIO', dt_registro: '2024-05-06', dt_extincao: null }];
    expect(partiesRunningOn(late, '2024-10-06')).toEqual([]);
    expect(partiesRunningOn(late, '2026-10-04')).toHaveLength(1);
  });
});

describe('registered parties on the server', () => {
  let app: TestApp;
  let owner: TestUser;
  const call = (path: string, body?: unknown): Promise<Result> => request(app.baseUrl, body === undefined ? 'GET' : 'POST', path, owner.headers, body);
  const add = (body: Json) => call('/api/entidade/add/?tp=candidato', body);
  const rules = (answer: Result) => (answer.body?.error?.details ?? []).map((detail: Json) => `${detail.field}:${detail.rule}`).sort();

  beforeAll(async () => {
    app = await startTestApp({ withMunicipalities: true });
    owner = await createUser(app);
    // A 2024 court file whose candidacies name only MDB and PT: the parties table holds just those two.
    const court = defineCourtModels(app.sequelize);
    const updated_at = new Date('2024-09-15T12:00:00Z');
    await court.Election.bulkCreate([
      { cd_eleicao: 619, ano: 2024, cd_tipo_eleicao: 2, nr_turno: 1, ds_eleicao: 'Eleições Municipais 2024', dt_eleicao: '2024-10-06', tp_abrangencia: 'MUNICIPAL', updated_at },
    ]);
    await court.Office.bulkCreate([
      { cd_cargo: 11, ds_cargo: 'PREFEITO', ballot_digits: 2 },
      { cd_cargo: 13, ds_cargo: 'VEREADOR', ballot_digits: 5 },
    ]);
    await court.Party.bulkCreate([
      { cd_eleicao: 619, nr_partido: 15, sg_partido: 'MDB', nm_partido: 'Movimento Democrático Brasileiro', nr_federacao: null },
      { cd_eleicao: 619, nr_partido: 13, sg_partido: 'PT', nm_partido: 'Partido dos Trabalhadores', nr_federacao: null },
    ]);
    courtReferenceOf(app.sequelize).invalidate();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('seeds the registered parties from the court\'s list, each row naming its source', async () => {
    const rows = (await app.sequelize.query('SELECT nr_partido, sg_partido, dt_registro, dt_extincao, sg_sucessor, fonte FROM registered_parties ORDER BY nr_partido, dt_registro', { type: 'SELECT' })) as Json[];
    expect(rows).toHaveLength(REGISTERED_PARTIES.length);
    expect(new Set(rows.map((row) => row.fonte))).toEqual(new Set(['TSE, Partidos políticos registrados no TSE (https://www.tse.jus.br/partidos/partidos-registrados-no-tse)']));
    const patriota = rows.find((row) => row.sg_partido === 'PATRIOTA')!;
    expect({ ...patriota, dt_registro: String(patriota.dt_registro).slice(0, 10), dt_extincao: String(patriota.dt_extincao).slice(0, 10), fonte: undefined }).toEqual({
      nr_partido: 51, sg_partido: 'PATRIOTA', dt_registro: '2012-06-19', dt_extincao: '2023-11-09', sg_sucessor: 'PRD', fonte: undefined,
    });
  });

  it('lists them read-only, all or those existing on a day, and refuses a day the list does not cover', async () => {
    const all = await call('/api/elections/registered_parties/');
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toEqual(REGISTERED_PARTIES.map((party) => ({ ...party })).sort((a, b) => a.nr_partido - b.nr_partido || a.dt_registro.localeCompare(b.dt_registro)));
    const pen = all.body.data.find((party: Json) => party.nr_partido === 51);
    expect(pen).toEqual({
      nr_partido: 51, sg_partido: 'PATRIOTA', nm_partido: 'Patriota', dt_registro: '2012-06-19', dt_extincao: '2023-11-09',
      tp_extincao: 'FUSÃO', sg_sucessor: 'PRD', nomes_anteriores: ['PEN - Partido Ecológico Nacional'],
    });

    const onElectionDay = await call('/api/elections/registered_parties/?em=2024-10-06');
    expect(onElectionDay.status).toBe(200);
    expect(onElectionDay.body.message).toBe('29 parties registered on 2024-10-06.');
    expect(acronyms(onElectionDay.body.data)).toEqual(acronyms(partiesRegisteredOn(REGISTERED_PARTIES, '2024-10-06')));

    const early = await call('/api/elections/registered_parties/?em=2018-10-07');
    expect(early.status).toBe(400);
    expect(early.body.error.details).toEqual([
      { location: 'query', field: 'em', rule: 'covered_day', message: 'must be a day from 2020-01-01 on (the list of registered parties covers no earlier day)', value: '2018-10-07' },
    ]);
    expect((await call('/api/elections/registered_parties/?em=ontem')).status).toBe(400);
  });

  it('accepts PL 22 and PRD 25 for 2024 though no imported candidacy names them, and refuses PTB 14, merged into PRD before the election', async () => {
    for (const [nome, nr_urna, partido] of [['Prefeito do PL', 22, '22'], ['Prefeita do PRD', 25, '25'], ['Vereador do PL', 22123, '22']] as const) {
      const answer = await add({ nome, position: nome.includes('Vereador') ? 'vereador' : 'prefeito', nr_urna, partido });
      expect(answer.status, `${nome}: ${answer.text}`).toBe(201);
    }
    const ptb = await add({ nome: 'Prefeito do PTB', position: 'prefeito', nr_urna: 14, partido: '14' });
    expect(rules(ptb)).toEqual(['nr_urna:party_of_election', 'partido:party_of_election']);
    const message = ptb.body.error.details.find((detail: Json) => detail.field === 'partido').message as string;
    expect(message).toMatch(/^must be the number of a party registered with the TSE that could run in Eleições Municipais 2024 \(2024, round 1, 2024-10-06\): 10 REPUBLICANOS, 11 PP, /);
    expect(message).toContain('22 PL');
    expect(message).toContain('25 PRD');
    expect(message).not.toContain('14 PTB');

    // A coalition's parties likewise: PRD and PL may join one in 2024, PTB and Patriota may not.
    const coalition = await add({ nome: 'Coligação', position: 'prefeito', partidosLegenda: ['PL', 'PRD', 'PTB', 'Patriota', 'União'] });
    expect(rules(coalition)).toEqual(['partidosLegenda.2:party_of_election', 'partidosLegenda.3:party_of_election']);
  });
});

describe('registered parties in the stateful msw mock', () => {
  const server = setupServer(...createStatefulHandlers().handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'bypass' }));
  afterAll(() => server.close());

  it('answers listRegisteredParties from the same list, and refuses a day the list does not cover', async () => {
    const api = await login(createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false }), 'ana.souza', DEFAULT_MOCK_PASSWORD);
    const headers = { Authorization: `Token ${api.token}` };
    const onDay = await fetch(`${DEFAULT_BASE_URL}/api/elections/registered_parties/?em=2024-10-06`, { headers });
    expect(onDay.status).toBe(200);
    const body = (await onDay.json()) as Json;
    expect(body.message).toBe('29 parties registered on 2024-10-06.');
    expect(acronyms(body.data)).toEqual(acronyms(partiesRegisteredOn(REGISTERED_PARTIES, '2024-10-06')));
    const early = await fetch(`${DEFAULT_BASE_URL}/api/elections/registered_parties/?em=2018-10-07`, { headers });
    expect(early.status).toBe(400);
    expect(((await early.json()) as Json).error.details[0]).toMatchObject({ field: 'em', rule: 'covered_day' });
  });
});
