/**
 * The stateful msw mock refuses the candidacies the server refuses (issue 42, section 6), through the
 * rules both import (@palanque/rules/candidacy-law): `ballot_name_length`, `office_scope`,
 * `proportional_coalition` and `minimum_age`, for candidates on create and update, and not for a
 * competitor; the same details the server answers (test/entity-candidacy-law.test.ts). And the documents'
 * digits (@palanque/rules/documents) for every kind of entity, as src/entities/rules.ts judges them.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PalanqueApiError, type PalanqueClient } from '../sdk/index.js';
import { useStatefulMock } from './helpers/msw.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { signedIn } = useStatefulMock();
let api: PalanqueClient;

beforeEach(async () => {
  api = await signedIn('carlos.pereira');
});

/** What addEntity answers: the status, and for a 422 its details as `field:rule`. */
async function add(body: Json, tp: 'candidato' | 'concorrente' = 'candidato'): Promise<{ status: number; rules: string[]; details: Json[]; id?: number }> {
  try {
    const answer = await api.POST('/api/entidade/add/', { body: body as never, params: { query: { tp } } });
    return { status: answer.response.status, rules: [], details: [], id: (answer.data as Json | undefined)?.data?.id };
  } catch (error) {
    if (!(error instanceof PalanqueApiError)) throw error;
    return { status: error.status, rules: error.details.map((detail) => `${detail.field}:${detail.rule}`).sort(), details: error.details as Json[] };
  }
}

describe('candidacies the court would refuse, in the mock', () => {
  it('ballot_name_length: at most 30 characters', async () => {
    const refused = await add({ nome: 'Maria', nm_urna: 'Maria Aparecida da Silva Santos Oliveira de Souza N' });
    expect(refused).toMatchObject({ status: 422, rules: ['nm_urna:ballot_name_length'] });
    expect(refused.details[0]!.message).toBe('must have at most 30 characters, spaces included (Res. TSE 23.609/2019 art. 25): it has 51');
    expect((await add({ nome: 'José', nm_urna: 'José Antônio da Conceição Ávil' })).status).toBe(201);
    expect((await add({ nome: 'Concorrente', nm_urna: 'Maria Aparecida da Silva Santos Oliveira de Souza N' }, 'concorrente')).status).toBe(201);
  });

  it('office_scope: tipoDisputa and the Federal District', async () => {
    expect((await add({ nome: 'Governador', position: 'governador', tipoDisputa: 'municipal' })).rules).toEqual(['tipoDisputa:office_scope']);
    expect((await add({ nome: 'Prefeito', position: 'prefeito', uf: 'DF' })).rules).toEqual(['uf:office_scope']);
    expect((await add({ nome: 'Distrital', position: 'deputado distrital', estado_disputa: 'SP' })).rules).toEqual(['estado_disputa:office_scope']);
    expect((await add({ nome: 'Distrital', position: 'deputada distrital', uf: 'DF' })).status).toBe(201);
    // An update on the stored office.
    const id = (await add({ nome: 'Governadora', position: 'governadora', tipoDisputa: 'estadual' })).id!;
    expect((await add({ id, nome: 'Governadora', tipoDisputa: 'municipal' })).rules).toEqual(['tipoDisputa:office_scope']);
    expect((await add({ id, nome: 'Governadora', cidade: 'Goiânia' })).status).toBe(200);
  });

  it('proportional_coalition: no coalition for councillors, a federation whole', async () => {
    const councillor = await add({ nome: 'Vereador', position: 'vereador', partidosLegenda: ['PT', 'PSB', 'MDB'] });
    expect(councillor.rules).toEqual(['partidosLegenda.1:proportional_coalition', 'partidosLegenda.2:proportional_coalition']);
    expect((await add({ nome: 'Vereadora', position: 'vereadora', partido: '13', partidosLegenda: ['PT', 'PC do B', 'PV'] })).status).toBe(201);
    expect((await add({ nome: 'Prefeito', position: 'prefeito', partidosLegenda: ['PT', 'PV', 'PSB'] })).rules).toEqual(['partidosLegenda:proportional_coalition']);
    expect((await add({ nome: 'Prefeito', position: 'prefeito', partidosLegenda: ['PSOL', 'REDE', 'PSB'] })).status).toBe(201);
  });

  it("minimum_age: measured in the calendar's election (2024: mayors take office on 1 January 2025, councillors 18 by 15 August 2024)", async () => {
    const young = await add({ nome: 'Lucas', position: 'prefeito', data_nascimento: '2004-01-02', disputa_eleitoral: 619 });
    expect(young.rules).toEqual(['data_nascimento:minimum_age']);
    expect(young.details[0]!.message).toBe(
      'must make the candidate 21 by 2025-01-01, when the winners of Eleições Municipais 2024 take office, as PREFEITO requires (CF art. 14 §3º VI; Lei 9.504 art. 11 §2º): born 2004-01-02, they would be 20 (position prefeito)',
    );
    expect((await add({ nome: 'Lucas', position: 'prefeito', data_nascimento: '2004-01-01', disputa_eleitoral: 619 })).status).toBe(201);
    expect((await add({ nome: 'Vera', position: 'vereadora', data_nascimento: '2006-08-16', disputa_eleitoral: 619 })).rules).toEqual(['data_nascimento:minimum_age']);
    expect((await add({ nome: 'Vera', position: 'vereadora', data_nascimento: '2006-08-15', disputa_eleitoral: 619 })).status).toBe(201);
  });

  it("refuses a CPF or voter id whose check digits are wrong, and a ballot number without its party's prefix, for any entity", async () => {
    const refused = await add({ nome: 'Maria', cpf: '529.982.247-24', titulo_eleitor: '102345670184', partido: '13', nr_urna: 4512 }, 'concorrente');
    expect(refused).toMatchObject({ status: 422, rules: ['cpf:cpf_check_digits', 'nr_urna:party_prefix', 'titulo_eleitor:voter_id_check_digits'] });
    expect(refused.details.find((detail) => detail.field === 'cpf')).toEqual({ location: 'body', field: 'cpf', rule: 'cpf_check_digits', message: 'is not a valid CPF (check digits)', value: '529.982.247-24' });
    const created = await add({ nome: 'Maria', cpf: '111.444.777-35', partido: '13', nr_urna: 1345 });
    expect(created).toMatchObject({ status: 201, rules: [] });
    const id = created.id!;
    // An update naming the party judges the stored ballot number against it.
    expect((await add({ id, nome: 'Maria', partido: '45' })).rules).toEqual(['nr_urna:party_prefix']);
  });

  it('creates the demo candidacies, which the court accepted', async () => {
    for (const candidacy_id of [501, 502, 503, 504, 505, 506, 507, 508, 509]) {
      const answer = await api.POST('/api/entidade/from_candidacy/', { body: { candidacy_id }, params: { query: { tp: 'candidato' } } }).then(
        (ok) => ok.response.status,
        (error: unknown) => (error instanceof PalanqueApiError ? `${error.status} ${JSON.stringify(error.details)}` : String(error)),
      );
      expect(answer, `candidacy ${candidacy_id}`).toBe(201);
    }
  });
});
