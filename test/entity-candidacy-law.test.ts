/**
 * Candidacies the electoral court would refuse (issue 42, section 6): `ballot_name_length`,
 * `office_scope`, `proportional_coalition` and `minimum_age`, each a 422 naming the rule, for candidates
 * (`tp=candidato`) on create, on an update that sends a field the rule reads, and on
 * create-from-candidacy; never for competitors or parties, and never again for a stored value an update
 * does not send. Through the real app, with and without the court's tables; the minimum age also through
 * judgeCandidacyLaw with a stub calendar. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCandidacyLaw, officeOfPosition } from '@palanque/rules/candidacy-law';
import { judgeCandidacyLaw, type ElectionLookup } from '../src/entities/candidacy-law.js';
import { defineCourtModels, type CandidacyRow } from '../src/elections/tse/models.js';
import { searchableName } from '../src/elections/tse/names.js';
import type { CandidateEntity } from '../src/entities/models.js';
import { courtReferenceOf } from '../src/elections/tse/reference.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const add = (app: TestApp, caller: TestUser, body: Json, tp = 'candidato') => request(app.baseUrl, 'POST', `/api/entidade/add/?tp=${tp}`, caller.headers, body);
const fromCandidacy = (app: TestApp, caller: TestUser, candidacyId: number, tp = 'candidato') =>
  request(app.baseUrl, 'POST', `/api/entidade/from_candidacy/?tp=${tp}`, caller.headers, { candidacy_id: candidacyId });

/** The details of a 422, as `field:rule`. */
function rulesBroken(answer: Result): string[] {
  expectError(answer, 422, 'validation_failed');
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`).sort();
}

async function created(answer: Promise<Result>): Promise<number> {
  const result = await answer;
  expect(result.status, result.text).toBe(201);
  return result.body.data.id;
}

/** 51 characters: what the sandbox accepted as a ballot name. */
const LONG_NAME = 'Maria Aparecida da Silva Santos Oliveira de Souza N';

describe("without the court's tables", () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await createUser(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  describe('ballot_name_length (Res. TSE 23.609/2019 art. 25)', () => {
    it('refuses a ballot name of more than 30 characters on create and on an update that sends it', async () => {
      expect(LONG_NAME).toHaveLength(51);
      const refused = await add(app, owner, { nome: 'Maria', nm_urna: LONG_NAME });
      expect(rulesBroken(refused)).toEqual(['nm_urna:ballot_name_length']);
      expect(refused.body.error.details[0]).toEqual({
        location: 'body', field: 'nm_urna', rule: 'ballot_name_length', value: LONG_NAME,
        message: 'must have at most 30 characters, spaces included (Res. TSE 23.609/2019 art. 25): it has 51',
      });
      // 30 characters, accents counted as one each, spaces included.
      const thirty = 'José Antônio da Conceição Ávil';
      expect([...thirty]).toHaveLength(30);
      const id = await created(add(app, owner, { nome: 'José', nm_urna: thirty }));
      expect(rulesBroken(await add(app, owner, { id, nome: 'José', nm_urna: `${thirty}a` }))).toEqual(['nm_urna:ballot_name_length']);
    });

    it('judges candidates only, and not a stored value again', async () => {
      expect((await add(app, owner, { nome: 'Concorrente', nm_urna: LONG_NAME }, 'concorrente')).status).toBe(201);
      const id = await created(add(app, owner, { nome: 'Antigo', nm_urna: 'Antigo' }));
      // A name stored before the rule (written behind the API's back).
      await app.entities.models.Entity.update({ nm_urna: LONG_NAME }, { where: { id } });
      const updated = await add(app, owner, { id, nome: 'Antigo', cidade: 'Campinas' });
      expect(updated.status, updated.text).toBe(200);
      expect(updated.body.data.nm_urna).toBe(LONG_NAME);
    });
  });

  describe('office_scope', () => {
    it("refuses an office against tipoDisputa's scope", async () => {
      const governor = await add(app, owner, { nome: 'Governador', position: 'governador', tipoDisputa: 'municipal' });
      expect(rulesBroken(governor)).toEqual(['tipoDisputa:office_scope']);
      expect(governor.body.error.details[0].message).toContain('for GOVERNADOR (position governador)');
      expect(rulesBroken(await add(app, owner, { nome: 'Prefeita', position: 'Prefeita', tipoDisputa: 'estadual' }))).toEqual(['tipoDisputa:office_scope']);
      expect(rulesBroken(await add(app, owner, { nome: 'Presidente', position: 'presidente', tipoDisputa: 'Municipal' }))).toEqual(['tipoDisputa:office_scope']);
      for (const [position, tipoDisputa] of [['governadora', 'estadual'], ['Deputada Federal', 'federal'], ['senador', 'geral'], ['vice-prefeito', 'municipal'], ['presidente', 'federal'], ['prefeito', 'eleição suplementar']]) {
        expect((await add(app, owner, { nome: `${position} ${tipoDisputa}`, position, tipoDisputa })).status, `${position} ${tipoDisputa}`).toBe(201);
      }
    });

    it('refuses offices that exist only in the Federal District, or never there', async () => {
      expect(rulesBroken(await add(app, owner, { nome: 'Distrital', position: 'deputado distrital', estado_disputa: 'SP' }))).toEqual(['estado_disputa:office_scope']);
      expect(rulesBroken(await add(app, owner, { nome: 'Prefeito', position: 'prefeito', uf: 'DF' }))).toEqual(['uf:office_scope']);
      expect(rulesBroken(await add(app, owner, { nome: 'Vereadora', position: 'vereadora', estado_disputa: 'DF' }))).toEqual(['estado_disputa:office_scope']);
      expect(rulesBroken(await add(app, owner, { nome: 'Vice', position: 'Vice-Prefeita', uf: 'DF' }))).toEqual(['uf:office_scope']);
      expect(rulesBroken(await add(app, owner, { nome: 'Estadual', position: 'deputado estadual', uf: 'DF' }))).toEqual(['uf:office_scope']);
      for (const [position, uf] of [['deputada distrital', 'DF'], ['governador', 'DF'], ['senadora', 'DF'], ['prefeito', 'SP']]) {
        expect((await add(app, owner, { nome: `${position} ${uf}`, position, uf })).status, `${position} ${uf}`).toBe(201);
      }
    });

    it('judges an update that sends a field it reads, on the entity as it will be', async () => {
      const id = await created(add(app, owner, { nome: 'Governadora', position: 'governadora', tipoDisputa: 'estadual', uf: 'GO' }));
      expect(rulesBroken(await add(app, owner, { id, nome: 'Governadora', tipoDisputa: 'municipal' }))).toEqual(['tipoDisputa:office_scope']);
      expect(rulesBroken(await add(app, owner, { id, nome: 'Governadora', position: 'prefeita', uf: 'DF' }))).toEqual(['tipoDisputa:office_scope', 'uf:office_scope']);
      expect((await add(app, owner, { id, nome: 'Governadora', position: 'prefeita', tipoDisputa: 'municipal' })).status).toBe(200);
      // A competitor is not judged.
      expect((await add(app, owner, { nome: 'Concorrente', position: 'governador', tipoDisputa: 'municipal' }, 'concorrente')).status).toBe(201);
    });
  });

  describe('proportional_coalition', () => {
    it('refuses a coalition for a proportional office, a federation acting as one party', async () => {
      const councillor = await add(app, owner, { nome: 'Vereador', position: 'vereador', partidosLegenda: ['PT', 'PSB', 'MDB'] });
      expect(rulesBroken(councillor)).toEqual(['partidosLegenda.1:proportional_coalition', 'partidosLegenda.2:proportional_coalition']);
      expect(councillor.body.error.details[0]).toMatchObject({ value: 'PSB' });
      expect(councillor.body.error.details[0].message).toContain('must be one of the parties of Federação Brasil da Esperança - FE BRASIL (PT, PCdoB, PV), which acts as one party');
      expect(rulesBroken(await add(app, owner, { nome: 'Deputado', position: 'deputado federal', partido: '50', partidosLegenda: ['PSOL', 'PSB'] }))).toEqual(['partidosLegenda.1:proportional_coalition']);
      expect(rulesBroken(await add(app, owner, { nome: 'Distrital', position: 'deputada distrital', uf: 'DF', partidosLegenda: ['MDB', 'PL'] }))).toEqual(['partidosLegenda.1:proportional_coalition']);
      // The party's own federation, accents and case aside; a single party is no coalition.
      expect((await add(app, owner, { nome: 'Vereadora', position: 'vereadora', partido: '13', partidosLegenda: ['PT', 'PC do B', 'pv'] })).status).toBe(201);
      expect((await add(app, owner, { nome: 'Deputada', position: 'deputada estadual', partidosLegenda: ['PSDB', 'Cidadania'] })).status).toBe(201);
      expect((await add(app, owner, { nome: 'Vereador', position: 'vereador', partidosLegenda: ['MDB'] })).status).toBe(201);
    });

    it("refuses a majoritarian coalition that splits a federation, and judges an update on the stored office", async () => {
      const mayor = await add(app, owner, { nome: 'Prefeito', position: 'prefeito', partidosLegenda: ['PT', 'PV', 'PSB'] });
      expect(rulesBroken(mayor)).toEqual(['partidosLegenda:proportional_coalition']);
      expect(mayor.body.error.details[0].message).toContain("must name all of Federação Brasil da Esperança - FE BRASIL's parties (PT, PCdoB, PV) or none");
      const id = await created(add(app, owner, { nome: 'Prefeito', position: 'prefeito', partidosLegenda: ['PT', 'PCdoB', 'PV', 'PSB', 'MDB'] }));
      expect(rulesBroken(await add(app, owner, { id, nome: 'Prefeito', partidosLegenda: ['PSOL', 'PSB'] }))).toEqual(['partidosLegenda:proportional_coalition']);
      // Changing the office to a proportional one judges the stored coalition.
      expect(rulesBroken(await add(app, owner, { id, nome: 'Prefeito', position: 'vereador' }))).toEqual(['partidosLegenda.3:proportional_coalition', 'partidosLegenda.4:proportional_coalition']);
      expect((await add(app, owner, { id, nome: 'Prefeito', cidade: 'Campinas' })).status).toBe(200);
      expect((await add(app, owner, { nome: 'Concorrente', position: 'vereador', partidosLegenda: ['PT', 'PSB', 'MDB'] }, 'partido')).status).toBe(201);
    });
  });

  describe('minimum_age (CF art. 14 §3º VI; Lei 9.504 art. 11 §2º), with a stub calendar', () => {
    const municipal2028 = { title: 'Eleições Municipais 2028', year: 2028, registration_deadline: '2028-08-15', supplementary: false };
    const general2026 = { title: 'Eleições Gerais 2026', year: 2026, registration_deadline: '2026-08-15', supplementary: false };
    const stub = (election: typeof municipal2028 | undefined): ElectionLookup & { asked: unknown[] } => {
      const asked: unknown[] = [];
      return {
        asked,
        electionFor: async (hints) => {
          asked.push(hints);
          return election;
        },
        inaugurationOn: (line, cdCargo) => (cdCargo >= 11 ? `${line.year + 1}-01-01` : cdCargo === 3 ? `${line.year + 1}-01-06` : cdCargo === 1 ? `${line.year + 1}-01-05` : `${line.year + 1}-02-01`),
      };
    };
    const judge = (body: Json, election: typeof municipal2028 | undefined, stored?: Json) => judgeCandidacyLaw(app.sequelize, { nome: 'X', ...body }, { stored: stored as never, elections: stub(election), today: '2026-11-29' });

    it('measures 21 for a mayor at inauguration: a mayor born in 2010 is refused', async () => {
      const lookup = stub(municipal2028);
      const details = await judgeCandidacyLaw(app.sequelize, { nome: 'Jovem', position: 'prefeito', data_nascimento: '2010-03-01', disputa_eleitoral: 619 }, { elections: lookup, today: '2026-11-29' });
      expect(details).toEqual([
        {
          location: 'body', field: 'data_nascimento', rule: 'minimum_age', value: '2010-03-01',
          message: 'must make the candidate 21 by 2029-01-01, when the winners of Eleições Municipais 2028 take office, as PREFEITO requires (CF art. 14 §3º VI; Lei 9.504 art. 11 §2º): born 2010-03-01, they would be 18 (position prefeito)',
        },
      ]);
      expect(lookup.asked).toEqual([{ candidacy_id: undefined, disputa_eleitoral: 619, cd_cargo: 11 }]);
      expect(await judge({ position: 'prefeito', data_nascimento: '2008-01-01' }, municipal2028)).toEqual([]);
      expect((await judge({ position: 'prefeita', data_nascimento: '2008-01-02' }, municipal2028)).map((detail) => detail.rule)).toEqual(['minimum_age']);
    });

    it('measures 18 for a councillor at the registration deadline', async () => {
      expect(await judge({ position: 'vereadora', data_nascimento: '2010-08-15' }, municipal2028)).toEqual([]);
      const [detail] = await judge({ position: 'vereador', data_nascimento: '2010-08-16' }, municipal2028);
      expect(detail).toMatchObject({ field: 'data_nascimento', rule: 'minimum_age' });
      expect(detail!.message).toContain('must make the candidate 18 by 2028-08-15, the registration deadline of Eleições Municipais 2028');
    });

    it('measures 30 for a governor, 35 for a senator and the President, 21 for deputies, at their inaugurations', async () => {
      expect((await judge({ position: 'governador', data_nascimento: '1997-01-07' }, general2026)).map((detail) => detail.rule)).toEqual(['minimum_age']);
      expect(await judge({ position: 'governador', data_nascimento: '1997-01-06' }, general2026)).toEqual([]);
      expect((await judge({ position: 'senadora', data_nascimento: '1992-02-02' }, general2026)).map((detail) => detail.rule)).toEqual(['minimum_age']);
      expect(await judge({ position: 'senadora', data_nascimento: '1992-02-01' }, general2026)).toEqual([]);
      expect((await judge({ position: 'presidente', data_nascimento: '1992-01-06' }, general2026)).map((detail) => detail.rule)).toEqual(['minimum_age']);
      expect(await judge({ position: 'deputado federal', data_nascimento: '2006-02-01' }, general2026)).toEqual([]);
      expect((await judge({ position: 'deputado federal', data_nascimento: '2006-02-02' }, general2026)).map((detail) => detail.rule)).toEqual(['minimum_age']);
    });

    it('does not judge without an election, an office or a real birth date, nor a stored birth date an update does not send', async () => {
      expect(await judge({ position: 'prefeito', data_nascimento: '2015-01-01' }, undefined)).toEqual([]);
      expect(await judge({ position: 'coordenador', data_nascimento: '2015-01-01' }, municipal2028)).toEqual([]);
      expect(await judge({ position: 'prefeito', data_nascimento: '2099-01-01' }, municipal2028)).toEqual([]);
      expect(await judge({ cidade: 'Campinas' }, municipal2028, { nome: 'X', position: 'prefeito', data_nascimento: '2015-01-01' })).toEqual([]);
      // An update that changes the office judges the stored birth date.
      expect((await judge({ position: 'prefeito' }, municipal2028, { nome: 'X', position: 'vereador', data_nascimento: '2009-01-01' })).map((detail) => detail.rule)).toEqual(['minimum_age']);
    });
  });

  it('knows the offices by law, feminine forms, accents and hyphens aside', () => {
    expect(['Vice-Prefeita', 'VICE PREFEITO', 'vice-prefeito'].map((position) => officeOfPosition(position)?.cd_cargo)).toEqual([12, 12, 12]);
    expect(officeOfPosition('Deputada Distrital')?.cd_cargo).toBe(8);
    expect(officeOfPosition('coordenadora')).toBeUndefined();
    // A body that sends no field of these rules is not judged by them.
    const named: CandidateEntity = { nome: 'X' };
    expect(checkCandidacyLaw({ sent: named, after: { ...named, nm_urna: LONG_NAME } })).toEqual([]);
  });
});

// --- with the court's tables: the election and federations they name, and create-from-candidacy --------

const MUNICIPAL_2024 = 619;
const YOUNG_MAYOR = 701; // mayor, 2024, born 2004-01-02: 20 on 1 January 2025
const COUNCILLOR_IN_COALITION = 702; // councillor, 2024, in a coalition PT / PSB (none since 2020)
const FEDERATION_COUNCILLOR = 703; // councillor, 2024, of the federation FE BRASIL

function candidacy(fields: Partial<CandidacyRow> & Pick<CandidacyRow, 'id' | 'cd_cargo' | 'nr_candidato' | 'nm_candidato' | 'nm_urna_candidato' | 'nr_partido'>): CandidacyRow {
  const row = {
    cd_eleicao: MUNICIPAL_2024, sq_candidato: `2500020${String(fields.id).padStart(5, '0')}`, sg_uf: 'SP', sg_ue: '71072', nr_cpf: null, nr_titulo_eleitoral: null,
    nr_federacao: null, sq_coligacao: null, cd_nacionalidade: 1, sg_uf_nascimento: null, nm_municipio_nascimento: null, dt_nascimento: null, cd_genero: 2,
    cd_grau_instrucao: 8, cd_estado_civil: 1, cd_cor_raca: null, cd_ocupacao: 131, cd_situacao_candidatura: 12, cd_sit_tot_turno: null, st_reeleicao: false,
    updated_at: new Date('2024-10-07T03:00:00Z'),
    ...fields,
  };
  return { ...row, nm_busca: searchableName(row.nm_candidato, row.nm_urna_candidato), row_hash: createHash('sha256').update(JSON.stringify(row)).digest('hex') } as CandidacyRow;
}

describe("with the court's tables", () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ withMunicipalities: true });
    owner = await createUser(app);
    const court = defineCourtModels(app.sequelize);
    const updated_at = new Date('2024-10-07T03:00:00Z');
    await court.Election.bulkCreate([{ cd_eleicao: MUNICIPAL_2024, ano: 2024, cd_tipo_eleicao: 2, nr_turno: 1, ds_eleicao: 'Eleições Municipais 2024', dt_eleicao: '2024-10-06', tp_abrangencia: 'MUNICIPAL', updated_at }]);
    await court.Office.bulkCreate([{ cd_cargo: 11, ds_cargo: 'PREFEITO', ballot_digits: 2 }, { cd_cargo: 13, ds_cargo: 'VEREADOR', ballot_digits: 5 }]);
    await court.Party.bulkCreate(
      [[13, 'PT', 1], [15, 'MDB', null], [40, 'PSB', null], [43, 'PV', 1], [65, 'PC do B', 1], [22, 'PL', 7]].map(([nr_partido, sg_partido, nr_federacao]) => ({
        cd_eleicao: MUNICIPAL_2024, nr_partido: nr_partido as number, sg_partido: sg_partido as string, nm_partido: `Partido ${sg_partido}`, nr_federacao: nr_federacao as number | null,
      })),
    );
    // A federation of the court's tables that the 2022 list lacks (synthetic: PL alone).
    await court.Federation.bulkCreate([
      { cd_eleicao: MUNICIPAL_2024, nr_federacao: 1, sg_federacao: 'FE BRASIL', nm_federacao: 'Federação Brasil da Esperança - FE BRASIL' },
      { cd_eleicao: MUNICIPAL_2024, nr_federacao: 7, sg_federacao: 'FED SINTETICA', nm_federacao: 'Federação Sintética' },
    ]);
    await court.Coalition.bulkCreate([
      { sq_coligacao: '250002000201', cd_eleicao: MUNICIPAL_2024, nm_coligacao: 'VEREADORES UNIDOS', ds_composicao: 'PT / PSB' },
      { sq_coligacao: '250002000202', cd_eleicao: MUNICIPAL_2024, nm_coligacao: 'Federação Brasil da Esperança - FE BRASIL', ds_composicao: 'Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV)' },
    ]);
    await court.Unit.bulkCreate([{ sg_ue: '71072', sg_uf: 'SP', nm_ue: 'SÃO PAULO', codigo_ibge: 3550308 }]);
    await court.Candidacy.bulkCreate([
      candidacy({ id: YOUNG_MAYOR, cd_cargo: 11, nr_candidato: 15, nm_candidato: 'LUCAS JOVEM', nm_urna_candidato: 'LUCAS JOVEM', nr_partido: 15, dt_nascimento: '2004-01-02' }),
      candidacy({ id: COUNCILLOR_IN_COALITION, cd_cargo: 13, nr_candidato: 13123, nm_candidato: 'CARLA COLIGADA', nm_urna_candidato: 'CARLA', nr_partido: 13, sq_coligacao: '250002000201' }),
      candidacy({ id: FEDERATION_COUNCILLOR, cd_cargo: 13, nr_candidato: 65123, nm_candidato: 'FÁBIO FEDERADO', nm_urna_candidato: 'FÁBIO', nr_partido: 65, nr_federacao: 1, sq_coligacao: '250002000202' }),
    ]);
    courtReferenceOf(app.sequelize).invalidate();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("measures the age in the election disputa_eleitoral names (the calendar's 2024 line: mayors take office on 1 January 2025)", async () => {
    const young = await add(app, owner, { nome: 'Lucas', position: 'prefeito', data_nascimento: '2004-01-02', disputa_eleitoral: MUNICIPAL_2024 });
    expect(rulesBroken(young)).toEqual(['data_nascimento:minimum_age']);
    expect(young.body.error.details[0].message).toContain('must make the candidate 21 by 2025-01-01, when the winners of Eleições Municipais 2024 take office');
    const id = await created(add(app, owner, { nome: 'Lucas', position: 'prefeito', data_nascimento: '2004-01-01', disputa_eleitoral: MUNICIPAL_2024 }));
    expect(rulesBroken(await add(app, owner, { id, nome: 'Lucas', data_nascimento: '2004-01-02' }))).toEqual(['data_nascimento:minimum_age']);
    expect(rulesBroken(await add(app, owner, { nome: 'Vera', position: 'vereadora', data_nascimento: '2006-08-16', disputa_eleitoral: MUNICIPAL_2024 }))).toEqual(['data_nascimento:minimum_age']);
    expect((await add(app, owner, { nome: 'Vera', position: 'vereadora', data_nascimento: '2006-08-15', disputa_eleitoral: MUNICIPAL_2024 })).status).toBe(201);
  });

  it('refuses a candidacy the court would refuse on create-from-candidacy, for candidates only', async () => {
    // The body names only candidacy_id: each detail names it, and the entity field the court's value fills in.
    const young = await fromCandidacy(app, owner, YOUNG_MAYOR);
    expect(rulesBroken(young)).toEqual(['candidacy_id:minimum_age']);
    expect(young.body.error.message).toBe(`Candidacy ${YOUNG_MAYOR} is one the electoral court would refuse, so it is no candidate entity.`);
    expect(young.body.error.details[0]).toMatchObject({ value: '2004-01-02' });
    expect(young.body.error.details[0].message).toMatch(new RegExp(`^names candidacy ${YOUNG_MAYOR}, whose data_nascimento must make the candidate 21 by 2025-01-01.*\\(candidacy ${YOUNG_MAYOR}\\)$`));
    const coalition = await fromCandidacy(app, owner, COUNCILLOR_IN_COALITION);
    expect(rulesBroken(coalition)).toEqual(['candidacy_id:proportional_coalition']);
    expect(coalition.body.error.details[0]).toMatchObject({ value: 'PSB' });
    expect(coalition.body.error.details[0].message).toContain(`names candidacy ${COUNCILLOR_IN_COALITION}, whose partidosLegenda.1 must be one of the parties of Federação Brasil da Esperança - FE BRASIL`);
    // A competitor is tracked as the court lists it.
    expect((await fromCandidacy(app, owner, YOUNG_MAYOR, 'concorrente')).status).toBe(201);
    // A councillor of a federation lists its parties.
    const federated = await fromCandidacy(app, owner, FEDERATION_COUNCILLOR);
    expect(federated.status, federated.text).toBe(201);
    expect(federated.body.data.partidosLegenda).toEqual(['PT', 'PCdoB', 'PV']);
  });

  it("judges a coalition by the federations of the court's tables for the election", async () => {
    // PL stands in a (synthetic) federation of its own in these tables: a coalition takes it whole, and all of FE BRASIL.
    const split = await add(app, owner, { nome: 'Prefeita', position: 'prefeita', disputa_eleitoral: MUNICIPAL_2024, partidosLegenda: ['PT', 'PL'] });
    expect(rulesBroken(split)).toEqual(['partidosLegenda:proportional_coalition']);
    expect(split.body.error.details[0].message).toContain("must name all of Federação Brasil da Esperança - FE BRASIL's parties (PT, PV, PC do B) or none");
    expect((await add(app, owner, { nome: 'Prefeita', position: 'prefeita', disputa_eleitoral: MUNICIPAL_2024, partidosLegenda: ['PT', 'PC do B', 'PV', 'PL'] })).status).toBe(201);
    // The party number names the councillor's own party: PV's federation.
    expect(rulesBroken(await add(app, owner, { nome: 'Vereador', position: 'vereador', disputa_eleitoral: MUNICIPAL_2024, partido: '43', nr_urna: 43123, partidosLegenda: ['PSB', 'PV'] }))).toEqual(['partidosLegenda.0:proportional_coalition']);
  });
});
