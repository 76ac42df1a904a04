/**
 * The political parties registered with the electoral court (TSE), with the day each was registered and
 * the day it ceased to exist (merged into a new party, or incorporated into another): reference data of
 * its own, not read from imported candidacies (issue 42, section 7). Shared by the server (migration
 * 0037 seeds the `registered_parties` table from it; src/entities/electoral-rules.ts judges a ballot
 * number's party by it) and the stateful msw mock (listRegisteredParties).
 *
 * What holds:
 * - A party exists on a day when its registration was granted on or before it and, if it ceased to
 *   exist, the day it ceased is after it (`partiesRegisteredOn`).
 * - A party may run in an election when it exists on the election's day and its statute was registered
 *   with the TSE at least six months before it (`partiesRunningOn`; Lei 9.504/1997 art. 4º, as worded by
 *   Lei 13.488/2017): PTB and Patriota could not run in 2024 (merged into PRD on 9 November 2023), PRD
 *   could.
 * - Numbers are reused: 25 was DEM's until the merger into União Brasil (2022) and is PRD's since 2023;
 *   14 was PTB's until 2023 and is Missão's since 2025; so a party is keyed by its number and the day it
 *   was registered, and a number names at most one party on any day.
 * - COVERED_FROM: every party that existed on any day since 1 January 2020 is listed (33 then, 29 in
 *   July 2025, 30 after Missão). An election before that day is not judged by this list.
 *
 * Source: TSE, "Partidos políticos registrados no TSE" (https://www.tse.jus.br/partidos/partidos-registrados-no-tse),
 * and the court's decisions on mergers (fusão) and incorporations (Lei 9.096/1995 art. 29): PSL and DEM
 * into União Brasil (8 February 2022); PROS into Solidariedade (14 February 2023); PSC into Podemos
 * (virtual plenary session ending 15 June 2023); PTB and Patriota into PRD (9 November 2023); Missão
 * registered on 4 November 2025. PEN (51, registered 2012) was renamed Patriota in 2018.
 */

/** One party registration, as the court lists it. Days are YYYY-MM-DD. */
export interface RegisteredParty {
  nr_partido: number;
  sg_partido: string;
  nm_partido: string;
  /** The day the court granted the registration of its statute. */
  dt_registro: string;
  /** The day it ceased to exist (the court approved its merger or incorporation); null while it exists. */
  dt_extincao: string | null;
  /** How it ceased: `FUSÃO` (merged into a new party) or `INCORPORAÇÃO` (absorbed by another); null while it exists. */
  tp_extincao: 'FUSÃO' | 'INCORPORAÇÃO' | null;
  /** The acronym of the party that succeeded it; null while it exists. */
  sg_sucessor: string | null;
  /** Its earlier names and acronyms, latest first (`PATRIOTA` was `PEN`). */
  nomes_anteriores: string[];
}

/** The first day the list is complete for (see the top of this file). */
export const COVERED_FROM = '2020-01-01';

export const REGISTERED_PARTIES_SOURCE = 'TSE, Partidos políticos registrados no TSE (https://www.tse.jus.br/partidos/partidos-registrados-no-tse)';

const party = (
  nr_partido: number,
  sg_partido: string,
  nm_partido: string,
  dt_registro: string,
  ended?: { on: string; how: 'FUSÃO' | 'INCORPORAÇÃO'; into: string },
  nomes_anteriores: string[] = [],
): RegisteredParty => ({
  nr_partido,
  sg_partido,
  nm_partido,
  dt_registro,
  dt_extincao: ended?.on ?? null,
  tp_extincao: ended?.how ?? null,
  sg_sucessor: ended?.into ?? null,
  nomes_anteriores,
});

/** Every party registered at any time since COVERED_FROM, by number, then registration. */
export const REGISTERED_PARTIES: readonly RegisteredParty[] = [
  party(10, 'REPUBLICANOS', 'Republicanos', '2005-08-25', undefined, ['PRB - Partido Republicano Brasileiro']),
  party(11, 'PP', 'Progressistas', '1995-11-16', undefined, ['PPB - Partido Progressista Brasileiro']),
  party(12, 'PDT', 'Partido Democrático Trabalhista', '1981-11-10'),
  party(13, 'PT', 'Partido dos Trabalhadores', '1982-02-11'),
  party(14, 'PTB', 'Partido Trabalhista Brasileiro', '1981-11-03', { on: '2023-11-09', how: 'FUSÃO', into: 'PRD' }),
  party(14, 'MISSÃO', 'Missão', '2025-11-04'),
  party(15, 'MDB', 'Movimento Democrático Brasileiro', '1981-06-30', undefined, ['PMDB - Partido do Movimento Democrático Brasileiro']),
  party(16, 'PSTU', 'Partido Socialista dos Trabalhadores Unificado', '1995-12-19'),
  party(17, 'PSL', 'Partido Social Liberal', '1998-06-02', { on: '2022-02-08', how: 'FUSÃO', into: 'UNIÃO' }),
  party(18, 'REDE', 'Rede Sustentabilidade', '2015-09-22'),
  party(19, 'PODE', 'Podemos', '1997-10-02', undefined, ['PTN - Partido Trabalhista Nacional']),
  party(20, 'PSC', 'Partido Social Cristão', '1990-03-29', { on: '2023-06-15', how: 'INCORPORAÇÃO', into: 'PODE' }),
  party(21, 'PCB', 'Partido Comunista Brasileiro', '1996-05-09'),
  party(22, 'PL', 'Partido Liberal', '2006-12-19', undefined, ['PR - Partido da República']),
  party(23, 'CIDADANIA', 'Cidadania', '1992-03-19', undefined, ['PPS - Partido Popular Socialista']),
  party(25, 'DEM', 'Democratas', '1986-09-11', { on: '2022-02-08', how: 'FUSÃO', into: 'UNIÃO' }, ['PFL - Partido da Frente Liberal']),
  party(25, 'PRD', 'Partido Renovação Democrática', '2023-11-09'),
  party(27, 'DC', 'Democracia Cristã', '1997-08-05', undefined, ['PSDC - Partido Social Democrata Cristão']),
  party(28, 'PRTB', 'Partido Renovador Trabalhista Brasileiro', '1995-03-28'),
  party(29, 'PCO', 'Partido da Causa Operária', '1997-09-30'),
  party(30, 'NOVO', 'Partido Novo', '2015-09-15'),
  party(33, 'MOBILIZA', 'Mobilização Nacional', '1990-10-25', undefined, ['PMN - Partido da Mobilização Nacional']),
  party(35, 'PMB', 'Partido da Mulher Brasileira', '2015-09-29'),
  party(36, 'AGIR', 'Agir', '1990-02-22', undefined, ['PTC - Partido Trabalhista Cristão', 'PJ - Partido da Juventude']),
  party(40, 'PSB', 'Partido Socialista Brasileiro', '1988-07-01'),
  party(43, 'PV', 'Partido Verde', '1993-09-30'),
  party(44, 'UNIÃO', 'União Brasil', '2022-02-08'),
  party(45, 'PSDB', 'Partido da Social Democracia Brasileira', '1989-08-24'),
  party(50, 'PSOL', 'Partido Socialismo e Liberdade', '2005-09-15'),
  party(51, 'PATRIOTA', 'Patriota', '2012-06-19', { on: '2023-11-09', how: 'FUSÃO', into: 'PRD' }, ['PEN - Partido Ecológico Nacional']),
  party(55, 'PSD', 'Partido Social Democrático', '2011-09-27'),
  party(65, 'PC do B', 'Partido Comunista do Brasil', '1988-06-23'),
  party(70, 'AVANTE', 'Avante', '1994-10-11', undefined, ['PT do B - Partido Trabalhista do Brasil']),
  party(77, 'SOLIDARIEDADE', 'Solidariedade', '2013-09-24'),
  party(80, 'UP', 'Unidade Popular', '2019-12-10'),
  party(90, 'PROS', 'Partido Republicano da Ordem Social', '2013-09-24', { on: '2023-02-14', how: 'INCORPORAÇÃO', into: 'SOLIDARIEDADE' }),
];

/** Whether `party` exists on `day` (YYYY-MM-DD): registered on or before it, not yet ceased. */
export function existsOn(party: Pick<RegisteredParty, 'dt_registro' | 'dt_extincao'>, day: string): boolean {
  return party.dt_registro <= day && (party.dt_extincao === null || day < party.dt_extincao);
}

/** The parties that exist on `day` (YYYY-MM-DD), by number; none for a day before COVERED_FROM (the list does not know it). */
export function partiesRegisteredOn<Party extends Pick<RegisteredParty, 'nr_partido' | 'dt_registro' | 'dt_extincao'>>(
  parties: readonly Party[],
  day: string,
): Party[] {
  if (day < COVERED_FROM) return [];
  return parties.filter((party) => existsOn(party, day)).sort((a, b) => a.nr_partido - b.nr_partido);
}

/** `day` (YYYY-MM-DD) moved back by `months` calendar months (the 31st of a shorter month is its last day). */
export function monthsBefore(day: string, months: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const first = new Date(Date.UTC(year, month - 1 - months, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  first.setUTCDate(Math.min(date, last));
  return first.toISOString().slice(0, 10);
}

/**
 * The parties that may run in an election held on `electionDay`: existing on it and registered at least
 * six months before it (Lei 9.504/1997 art. 4º); none for a day before COVERED_FROM.
 */
export function partiesRunningOn<Party extends Pick<RegisteredParty, 'nr_partido' | 'dt_registro' | 'dt_extincao'>>(
  parties: readonly Party[],
  electionDay: string,
): Party[] {
  const registeredBy = monthsBefore(electionDay, 6);
  return partiesRegisteredOn(parties, electionDay).filter((party) => party.dt_registro <= registeredBy);
}
