/**
 * The court's 5-digit municipality codes and their mapping to IBGE (issue 42, section 7): the modulo-11
 * check digit (verified on the court's own list, see src/elections/tse/municipality-codes.ts), the
 * municipality import keeping the list's SIAFI code (migration 0037), and the candidacy import mapping a
 * unit by its code first: a name the court spells otherwise (SÃO LUÍS DO PARAITINGA) maps by code, a code
 * that names another municipality loses to the name (reported), a code that is not SIAFI-based falls back
 * to the name (reported), and units abroad (ZZ) are counted, never reported as unmatched. On SQLite, and
 * on PostgreSQL with TEST_DATABASE_URL.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { importCandidacies } from '../src/elections/tse/import.js';
import { closeSpellings, courtCheckDigit, courtCodeOfSiafi, hasValidCheckDigit } from '../src/elections/tse/municipality-codes.js';
import { importMunicipalities } from '../src/municipalities/import.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { COURT_COLUMNS_2024, courtCsv, OFFICES, PARTIES, SAMPLE_UNITS, sampleCandidacy } from './helpers/court-files.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

describe("the court's municipality codes", () => {
  it('end in a modulo-11 check digit of the first four (weights 2 to 5 from the right, a remainder under 2 giving 0)', () => {
    // Codes as the court's files write them, with the municipality list's SIAFI codes.
    const known: Array<[string, number]> = [
      ['71072', 7107], // São Paulo
      ['62910', 6291], // Campinas (remainder 1: digit 0)
      ['70718', 7071], // Santos
      ['64777', 6477], // Guarulhos
      ['69698', 6969], // Ribeirão Preto
      ['70173', 7017], // Santa Bárbara d'Oeste
      ['64017', 6401], // Embu das Artes
      ['71013', 7101], // São Luiz do Paraitinga
      ['41238', 4123], // Belo Horizonte
      ['41777', 4177], // Brazópolis
      ['00035', 3], // Porto Velho
    ];
    for (const [code, siafi] of known) {
      expect(courtCodeOfSiafi(siafi), code).toBe(Number(code));
      expect(hasValidCheckDigit(code), code).toBe(true);
    }
    expect(courtCheckDigit(6291)).toBe(0);
    expect(hasValidCheckDigit('35')).toBe(true); // leading zeros left out
    expect(hasValidCheckDigit('71073')).toBe(false);
    expect(hasValidCheckDigit('41360')).toBe(true); // Pingo d'Água: checks, though its first four are not its SIAFI code (0688)
    expect(hasValidCheckDigit('SP')).toBe(false);
  });

  it('tells a spelling of a name from another name', () => {
    expect(closeSpellings('SÃO LUÍS DO PARAITINGA', 'São Luiz do Paraitinga')).toBe(true);
    expect(closeSpellings('BRASÓPOLIS', 'Brazópolis')).toBe(true);
    expect(closeSpellings('ASSÚ', 'Açu')).toBe(true);
    expect(closeSpellings('CAMPO GRANDE', 'Augusto Severo (Campo Grande)')).toBe(true);
    expect(closeSpellings('ALVORADA DO OESTE', "Alta Floresta D'Oeste")).toBe(false);
  });
});

describe('mapping the units of a candidacy file to IBGE', () => {
  const logger = pino({ level: 'silent' });
  let database: TestDatabase;
  let sequelize: Sequelize;
  let scratch: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, logger);
    await migrate(sequelize, logger);
    await importMunicipalities(sequelize, { source: SHARED_MUNICIPIOS, sha256: SHARED_MUNICIPIOS_SHA256 });
    scratch = await mkdtemp(join(tmpdir(), 'palanque-municipality-codes-'));
  });

  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  it("keeps the municipality list's SIAFI codes", async () => {
    const rows = await sequelize.query<{ codigo_ibge: number; siafi_id: number }>(
      'SELECT codigo_ibge, siafi_id FROM municipalities WHERE codigo_ibge IN (3550308, 3509502, 3150539) ORDER BY codigo_ibge',
      { type: QueryTypes.SELECT },
    );
    expect(rows.map((row) => [Number(row.codigo_ibge), Number(row.siafi_id)])).toEqual([[3150539, 688], [3509502, 6291], [3550308, 7107]]);
  });

  it('maps by code, falls back to the name (reported), and counts units abroad apart', async () => {
    const unit = (SG_UF: string, SG_UE: string, NM_UE: string) => ({ SG_UF, SG_UE, NM_UE });
    let sq = 250_003_000_000;
    const line = (place: ReturnType<typeof unit>) => sampleCandidacy({ ...place, ...OFFICES.vereador, ...PARTIES.PL, NR_CANDIDATO: '22123', SQ_CANDIDATO: String((sq += 1)) });
    const lines = [
      line(unit('SP', '71013', 'SÃO LUÍS DO PARAITINGA')), // IBGE: São Luiz; the code maps it
      line(unit('MG', SAMPLE_UNITS.brasopolis.SG_UE, 'BRASÓPOLIS')), // IBGE: Brazópolis
      line(unit('SP', '62910', 'CAMPINAS')), // code and name agree
      line(unit('MG', '41360', "PINGO D'ÁGUA")), // a court code that is not SIAFI-based: the name maps it
      line(unit('RO', '00450', 'CABIXI')), // São Miguel do Guaporé's SIAFI-derived code: the name wins
      line(unit('RO', '00337', 'ALVORADA DO OESTE')), // Alta Floresta D'Oeste's code, a name too far from it: unmatched
      line(unit('ZZ', '29173', 'KATMANDU')), // voters abroad
      line(unit('ZZ', '29254', 'ABIDJÃ')),
    ];
    const path = join(scratch, 'consulta_cand_2024_BRASIL.csv');
    await writeFile(path, courtCsv(lines, { columns: COURT_COLUMNS_2024 }));

    const report = await importCandidacies(sequelize, { source: path, allowedHosts: [] });

    expect(report.rejected).toBe(0);
    expect(report.unmatched_units).toEqual([{ sg_ue: '00337', sg_uf: 'RO', nm_ue: 'ALVORADA DO OESTE' }]);
    expect(report.units_spelled_otherwise).toEqual([
      { sg_ue: '41777', sg_uf: 'MG', nm_ue: 'BRASÓPOLIS', codigo_ibge: 3108909, nome: 'Brazópolis' },
      { sg_ue: '71013', sg_uf: 'SP', nm_ue: 'SÃO LUÍS DO PARAITINGA', codigo_ibge: 3550001, nome: 'São Luiz do Paraitinga' },
    ]);
    expect(report.units_matched_by_name).toEqual([
      { sg_ue: '41360', sg_uf: 'MG', nm_ue: "PINGO D'ÁGUA", codigo_ibge: 3150539, code_names: null },
      { sg_ue: '00450', sg_uf: 'RO', nm_ue: 'CABIXI', codigo_ibge: 1100031, code_names: 'São Miguel do Guaporé' },
    ]);
    expect(report.abroad_units).toBe(2);

    const units = await sequelize.query<{ sg_ue: string; codigo_ibge: number | null }>('SELECT sg_ue, codigo_ibge FROM tse_units ORDER BY sg_ue', { type: QueryTypes.SELECT });
    expect(units.map((row) => [row.sg_ue, row.codigo_ibge === null ? null : Number(row.codigo_ibge)])).toEqual([
      ['00337', null], ['00450', 1100031], ['29173', null], ['29254', null], ['41360', 3150539], ['41777', 3108909], ['62910', 3509502], ['71013', 3550001],
    ]);
  });
});
