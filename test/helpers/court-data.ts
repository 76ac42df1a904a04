/**
 * A coherent sample of the electoral court's tables for tests, written straight through the models (no
 * import): the demo data of fixtures/elections.json, the one the sandbox and the msw handlers show. The
 * 2024 municipal election (619) with mayors and councillors of São Paulo, Campinas and Belo Horizonte, the
 * 2022 state election of SP (546: a governor, a federal and a state deputy) and the 2022 federal one
 * (544: a president); parties, three federations, two coalitions, the code tables with labels and the
 * units mapped to IBGE codes. Every person is made up.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sequelize } from 'sequelize';
import { writeCourtFixture, type CourtFixture } from '../../src/elections/tse/demo-data.js';

export const COURT_FIXTURE: CourtFixture = JSON.parse(readFileSync(fileURLToPath(new URL('../../fixtures/elections.json', import.meta.url)), 'utf8')) as CourtFixture;

/** The elections' codes (CD_ELEICAO). */
export const ELECTIONS = { municipal2024: 619, federal2022: 544, state2022: 546 } as const;

/** The sample's candidacies by who they are (their ids, kept from the fixture). */
export const CANDIDACIES = {
  /** MARIA DA SILVA SANTOS, mayor of São Paulo 2024, 13 (PT, FE BRASIL, a coalition), every personal field given. */
  maria: 501,
  /** JOÃO CARLOS FERREIRA, mayor of São Paulo 2024, 45 (PSDB). */
  joaoFerreira: 502,
  /** JOÃO D'ÁVILA DA SILVA, councillor of São Paulo 2024, 50123 (PSOL); CPF, voter id and birth withheld by the file. */
  joaoDavila: 503,
  /** MARCOS ANTÔNIO RIBEIRO, councillor of Campinas 2024, 45678 (PSDB). */
  marcos: 504,
  /** ANA LÚCIA GONÇALVES, mayor of Belo Horizonte (MG) 2024, 55 (PSD). */
  ana: 505,
  /** JOSÉ CARLOS DE OLIVEIRA, governor of SP 2022, 45. */
  governor: 506,
  /** LUCIANA MARIA DA SILVA, federal deputy for SP 2022, 1311 (PT). */
  federalDeputy: 507,
  /** RAFAEL SOUZA LIMA, state deputy for SP 2022, 30777 (NOVO), INAPTO. */
  stateDeputy: 508,
  /** ROBERTO ALVES NUNES, president 2022, 30 (NOVO). */
  president: 509,
} as const;

/** Writes the sample (rows already there are left alone). */
export async function loadCourtSample(sequelize: Sequelize): Promise<void> {
  await writeCourtFixture(sequelize, COURT_FIXTURE);
}

/** What an import does to the data's version: it marks the elections it wrote to. */
export async function markImported(sequelize: Sequelize, at = new Date()): Promise<void> {
  await sequelize.query('UPDATE tse_elections SET updated_at = :at', { replacements: { at } });
}

/** Links an entity to a candidacy, as creating it from the candidacy does. */
export async function linkEntity(sequelize: Sequelize, entityId: number, candidacyId: number | null): Promise<void> {
  await sequelize.query('UPDATE entities SET candidacy_id = :candidacyId WHERE id = :entityId', { replacements: { entityId, candidacyId } });
}
