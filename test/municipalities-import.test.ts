/**
 * Municipality import test.
 *
 * The import (src/municipalities/import.ts) is how the reference list of Brazil's 5,570 municipalities
 * gets into a production database, from a file or an http(s) URL, checked against a pinned sha256. It
 * must load the shared data set exactly (codes, accents, apostrophes, coordinates north of the equator),
 * be safe to re-run (a second run changes nothing, a drifted row is put back), and never half-write or
 * silently accept bad data: a wrong digest, a bad row, a missing column or an unreadable source must
 * fail with an ImportError that says what is wrong, and leave the table exactly as it was.
 *
 * Runs on SQLite by default and on PostgreSQL when TEST_DATABASE_URL is set (see helpers/database.ts).
 * The shared CSV is only read, never copied; the small bad files are written to a temp dir at run time.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { ImportError, importMunicipalities, type ImportReport } from '../src/municipalities/import.js';
import {
  defineMunicipalityModel,
  loadAllMunicipalities,
  type MunicipalityModel,
} from '../src/municipalities/model.js';
import { STATE_CODES, type Municipality } from '../src/municipalities/rules.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const SHARED_ROWS = 5570;
const HEADER = 'codigo_ibge,nome,latitude,longitude,capital,codigo_uf,siafi_id,ddd,fuso_horario';
const WRONG_SHA256 = '0'.repeat(64);

const logger = pino({ level: 'silent' });

interface Db {
  sequelize: Sequelize;
  model: MunicipalityModel;
  dialect: TestDatabase['dialect'];
}

/** Every database this file creates, closed and dropped in afterAll. */
const opened: Array<{ database: TestDatabase; sequelize?: Sequelize }> = [];
let scratchDir = '';

/** A new, migrated, empty database. */
async function freshDatabase(): Promise<Db> {
  const database = await createTestDatabase();
  const entry: { database: TestDatabase; sequelize?: Sequelize } = { database };
  opened.push(entry);
  const sequelize = await openDatabase(database.url, logger);
  entry.sequelize = sequelize;
  await migrate(sequelize, logger);
  return { sequelize, model: defineMunicipalityModel(sequelize), dialect: database.dialect };
}

function importShared(db: Db, sha256: string | undefined = SHARED_MUNICIPIOS_SHA256): Promise<ImportReport> {
  return importMunicipalities(db.sequelize, { source: SHARED_MUNICIPIOS, sha256 });
}

function loadAll(db: Db): Promise<Municipality[]> {
  return loadAllMunicipalities(db.model);
}

/** Each row's code and last-write stamp: proves an import did not rewrite rows it calls unchanged. */
function writeStamps(db: Db): Promise<object[]> {
  return db.sequelize.query('SELECT codigo_ibge, updated_at FROM municipalities ORDER BY codigo_ibge', {
    type: QueryTypes.SELECT,
  });
}

/** Writes a small hand-made CSV (header first) into the scratch dir and returns its path. */
async function writeCsv(name: string, lines: string[]): Promise<string> {
  const path = join(scratchDir, name);
  await writeFile(path, lines.map((line) => `${line}\n`).join(''), 'utf8');
  return path;
}

/** Runs an import that must fail with an ImportError, and returns that error. */
async function importFailure(run: Promise<unknown>): Promise<ImportError> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ImportError) return error;
    throw error;
  }
  throw new Error('the import succeeded but was expected to fail with an ImportError');
}

async function sha256Of(path: string): Promise<string> {
  return createHash('sha256').update(await readFile(path)).digest('hex');
}

/** Serves the shared file's bytes at /municipios.csv on a loopback port; anything else is a 404. */
async function startCsvServer(body: Buffer): Promise<{ baseUrl: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/municipios.csv') {
      response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'content-length': body.length });
      response.end(body);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

// A few real rows, for the small hand-made files.
const SAO_PAULO: Municipality = { codigo_ibge: 3550308, nome: 'São Paulo', latitude: -23.5329, longitude: -46.6395, capital: true, codigo_uf: 35 };
const BOA_VISTA: Municipality = { codigo_ibge: 1400100, nome: 'Boa Vista', latitude: 2.82384, longitude: -60.6753, capital: true, codigo_uf: 14 };
const BRASILIA: Municipality = { codigo_ibge: 5300108, nome: 'Brasília', latitude: -15.7795, longitude: -47.9297, capital: true, codigo_uf: 53 };
const VALID_LINES = [
  '3550308,São Paulo,-23.5329,-46.6395,1,35,7107,11,America/Sao_Paulo',
  '1400100,Boa Vista,2.82384,-60.6753,1,14,0301,95,America/Porto_Velho',
  '5300108,Brasília,-15.7795,-47.9297,1,53,9701,61,America/Sao_Paulo',
];

/**
 * Bad rows, each on a known line (the header is line 1), between valid ones. The valid rows differ from
 * the shared data (São Paulo moved, a made-up 3599999) so that a partial write would show.
 */
const BAD_FILE_LINES = [
  HEADER, //                                                                          line 1
  '3550308,São Paulo,-23.5,-46.6,1,35,7107,11,America/Sao_Paulo', //                  line 2 (valid)
  '3304557,Rio de Janeiro,-22.9129,-43.2003,1,35,6001,21,America/Sao_Paulo', //       line 3: code 33..., state 35
  '2000001,Nenhures,-10.0,-50.0,0,20,0001,99,America/Sao_Paulo', //                  line 4: state 20 does not exist
  '1400100,Boa Vista,12.5,-60.6753,1,14,0301,95,America/Porto_Velho', //             line 5: latitude north of Brazil
  '5300108,Brasília,abc,-47.9297,1,53,9701,61,America/Sao_Paulo', //                 line 6: latitude not a number
  '3304557,Rio de Janeiro,-22.9129,-43.2003,2,33,6001,21,America/Sao_Paulo', //      line 7: capital 2
  '4106902,,-25.4195,-49.2646,1,41,7535,41,America/Sao_Paulo', //                    line 8: empty name
  '3550308,São Paulo,-23.5329,-46.6395,1,35,7107,11,America/Sao_Paulo', //           line 9: repeats line 2
  '3599999,Município de Teste,-22.0,-47.0,0,35,9999,11,America/Sao_Paulo', //        line 10 (valid)
];
const BAD_FILE_PROBLEMS: RegExp[] = [
  /^line 3: codigo_ibge must start with codigo_uf \(35\)$/,
  /^line 4: codigo_uf must be one of the 27 IBGE state codes$/,
  /^line 5: latitude must be between -34 and 6$/,
  /^line 6: latitude "abc" is not a decimal number$/,
  /^line 7: capital "2" must be 0 or 1$/,
  /^line 8: nome must be 1 to 100 characters, not blank$/,
  /^line 9: codigo_ibge 3550308 repeats line 2$/,
];

beforeAll(async () => {
  scratchDir = await mkdtemp(join(tmpdir(), 'palanque-import-test-'));
});

afterAll(async () => {
  for (const { database, sequelize } of opened.reverse()) {
    await sequelize?.close();
    await database.drop();
  }
  if (scratchDir) await rm(scratchDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// The shared data set, loaded, re-loaded and repaired (one database, in order)
// ---------------------------------------------------------------------------

describe('importing the shared municipality file', () => {
  let db: Db;
  let afterFirstImport: Municipality[];

  beforeAll(async () => {
    db = await freshDatabase();
  });

  it('loads all 5,570 rows into an empty table and reports them as inserted', async () => {
    const report = await importShared(db);

    expect(report).toEqual({
      source: SHARED_MUNICIPIOS,
      sha256: SHARED_MUNICIPIOS_SHA256,
      rows: SHARED_ROWS,
      inserted: SHARED_ROWS,
      updated: 0,
      unchanged: 0,
    });
    afterFirstImport = await loadAll(db);
    expect(afterFirstImport).toHaveLength(SHARED_ROWS);
    expect(new Set(afterFirstImport.map((row) => row.codigo_ibge)).size).toBe(SHARED_ROWS);
  });

  it('keeps the facts of the data set: capitals, exact names, accents, northern latitudes, state prefixes', () => {
    const rows = afterFirstImport;
    const byCode = new Map(rows.map((row) => [row.codigo_ibge, row]));

    // 27 capitals, one per federative unit, Brasília and São Paulo among them.
    const capitals = rows.filter((row) => row.capital);
    expect(capitals).toHaveLength(27);
    expect(new Set(capitals.map((row) => row.codigo_uf)).size).toBe(27);
    expect(byCode.get(5300108)).toEqual(BRASILIA);
    expect(byCode.get(3550308)).toEqual(SAO_PAULO);

    // The first row by code, apostrophe (U+0027) byte for byte.
    const first = rows[0];
    expect(first?.codigo_ibge).toBe(1100015);
    expect(Buffer.from(first?.nome ?? '', 'utf8')).toEqual(Buffer.from('Alta Floresta D\u0027Oeste', 'utf8'));

    // North of the equator: only Roraima (14) and Amapá (16), Boa Vista among them.
    const north = rows.filter((row) => row.latitude > 0);
    expect(north.length).toBeGreaterThan(0);
    expect(north.every((row) => row.codigo_uf === 14 || row.codigo_uf === 16)).toBe(true);
    expect(byCode.get(1400100)).toEqual(BOA_VISTA);

    // Every code starts with its state's code, and every state is one of the 27.
    expect(rows.filter((row) => Math.trunc(row.codigo_ibge / 100_000) !== row.codigo_uf)).toEqual([]);
    expect(new Set(rows.map((row) => row.codigo_uf))).toEqual(new Set(STATE_CODES));

    // Accents survive the round trip, composed (NFC) as in the file.
    expect(rows.some((row) => row.nome.includes('ã'))).toBe(true);
    expect(rows.some((row) => row.nome.includes('í'))).toBe(true);
    expect(byCode.get(1600105)?.nome).toBe('Amapá');
    expect(rows.filter((row) => row.nome !== row.nome.normalize('NFC'))).toEqual([]);
  });

  it('is idempotent: a second import reports every row unchanged and rewrites nothing', async () => {
    const stampsBefore = await writeStamps(db);

    const report = await importShared(db);

    expect(report).toMatchObject({ rows: SHARED_ROWS, inserted: 0, updated: 0, unchanged: SHARED_ROWS });
    expect(await loadAll(db)).toEqual(afterFirstImport);
    expect(await writeStamps(db)).toEqual(stampsBefore);
  });

  it('detects a row that drifted from the file and puts it back', async () => {
    await db.model.update({ nome: 'Sampa' }, { where: { codigo_ibge: 3550308 } });
    expect((await loadAll(db)).find((row) => row.codigo_ibge === 3550308)?.nome).toBe('Sampa');
    const otherStamps = (await writeStamps(db)).filter((row) => !('codigo_ibge' in row && Number(row.codigo_ibge) === 3550308));

    const report = await importShared(db);

    expect(report).toMatchObject({ rows: SHARED_ROWS, inserted: 0, updated: 1, unchanged: SHARED_ROWS - 1 });
    const rows = await loadAll(db);
    expect(rows.find((row) => row.codigo_ibge === 3550308)).toEqual(SAO_PAULO);
    expect(rows).toEqual(afterFirstImport);
    // Only the drifted row was written.
    expect((await writeStamps(db)).filter((row) => !('codigo_ibge' in row && Number(row.codigo_ibge) === 3550308))).toEqual(otherStamps);
  });

  it('rejects a file with bad rows without touching the rows already there', async () => {
    const path = await writeCsv('bad-rows-on-loaded.csv', BAD_FILE_LINES);

    const error = await importFailure(importMunicipalities(db.sequelize, { source: path, sha256: undefined }));

    expect(error.problems).toHaveLength(BAD_FILE_PROBLEMS.length);
    expect(await loadAll(db)).toEqual(afterFirstImport);
  });
});

// ---------------------------------------------------------------------------
// Checks that must stop an import before it writes anything
// ---------------------------------------------------------------------------

describe('an import that must not write', () => {
  it('refuses a source whose sha256 differs from the expected one, naming both digests', async () => {
    const db = await freshDatabase();

    const error = await importFailure(importShared(db, WRONG_SHA256));

    expect(error.message).toContain(SHARED_MUNICIPIOS_SHA256);
    expect(error.message).toContain(WRONG_SHA256);
    expect(error.message).toMatch(/nothing was written/);
    expect(await loadAll(db)).toEqual([]);
  });

  it('rejects every bad row, each named by its line and reason, and writes none of the good ones', async () => {
    const db = await freshDatabase();
    const path = await writeCsv('bad-rows.csv', BAD_FILE_LINES);

    const error = await importFailure(importMunicipalities(db.sequelize, { source: path, sha256: undefined }));

    expect(error.message).toContain(`7 bad row(s) in ${path}`);
    expect(error.problems).toHaveLength(BAD_FILE_PROBLEMS.length);
    BAD_FILE_PROBLEMS.forEach((problem, index) => expect(error.problems[index]).toMatch(problem));
    // The valid rows (lines 2 and 10) are not blamed, and are not written either.
    expect(error.problems.filter((problem) => /^line (2|10):/.test(problem))).toEqual([]);
    expect(await loadAll(db)).toEqual([]);
  });

  it('reports a file with an unexpected digest as the wrong file, before looking at its rows', async () => {
    const db = await freshDatabase();
    const path = await writeCsv('wrong-and-bad.csv', BAD_FILE_LINES);
    const error = await importMunicipalities(db.sequelize, { source: path, sha256: SHARED_MUNICIPIOS_SHA256.toUpperCase() }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).message).toMatch(/sha256 is [0-9a-f]{64}, not the expected 4c7cd386/);
    expect((error as ImportError).problems).toEqual([]);
    expect(await loadAll(db)).toEqual([]);
  });

  it('rejects a header without a required column, naming the column', async () => {
    const db = await freshDatabase();
    const path = await writeCsv('no-capital.csv', [
      'codigo_ibge,nome,latitude,longitude,codigo_uf,siafi_id,ddd,fuso_horario',
      '3550308,São Paulo,-23.5329,-46.6395,35,7107,11,America/Sao_Paulo',
    ]);

    const error = await importFailure(importMunicipalities(db.sequelize, { source: path, sha256: undefined }));

    expect(error.message).toMatch(/lacks the column\(s\) capital\b/);
    expect(await loadAll(db)).toEqual([]);
  });

  it('rejects a source that cannot be opened, naming the path', async () => {
    const db = await freshDatabase();
    const missing = join(scratchDir, 'does-not-exist', 'municipios.csv');

    const error = await importFailure(importMunicipalities(db.sequelize, { source: missing, sha256: undefined }));

    expect(error.message).toContain(missing);
    expect(await loadAll(db)).toEqual([]);
  });

  it('rejects a file with a header and no rows, and an empty file', async () => {
    const db = await freshDatabase();
    const headerOnly = await writeCsv('header-only.csv', [HEADER]);
    const empty = await writeCsv('empty.csv', []);

    for (const source of [headerOnly, empty]) {
      const error = await importFailure(importMunicipalities(db.sequelize, { source, sha256: undefined }));
      expect(error.message).toContain(source);
      expect(error.message).toMatch(/holds no municipalities/);
    }
    expect(await loadAll(db)).toEqual([]);
  });

  it('writes all rows in one transaction: a write that fails half-way leaves the table as it was', async () => {
    const db = await freshDatabase();
    const start = await writeCsv('start.csv', [HEADER, VALID_LINES[0] ?? '']);
    await importMunicipalities(db.sequelize, { source: start, sha256: undefined });
    const before = await loadAll(db);
    expect(before).toEqual([SAO_PAULO]);

    // The next file inserts two new rows (written first) and updates São Paulo, which the database refuses.
    await refuseUpdates(db);
    const next = await writeCsv('next.csv', [HEADER, ...VALID_LINES.slice(1), VALID_LINES[0]?.replace('São Paulo', 'Sampa') ?? '']);

    const failure = await importMunicipalities(db.sequelize, { source: next, sha256: undefined }).then(
      () => undefined,
      (error: unknown) => error,
    );

    // An ImportError (a clear message for the CLI and the start-up log) that carries the driver's reason.
    expect(failure).toBeInstanceOf(ImportError);
    expect((failure as Error).message).toMatch(/nothing was written: .*refused by the test/);
    expect(await loadAll(db)).toEqual(before);
  });
});

/** A trigger that makes every UPDATE of a municipality fail, to break an import after its inserts. */
async function refuseUpdates(db: Db): Promise<void> {
  if (db.dialect === 'sqlite') {
    await db.sequelize.query(
      "CREATE TRIGGER refuse_update BEFORE UPDATE ON municipalities BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
    );
  } else {
    await db.sequelize.query(
      "CREATE FUNCTION refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$",
    );
    await db.sequelize.query('CREATE TRIGGER refuse_update BEFORE UPDATE ON municipalities FOR EACH ROW EXECUTE FUNCTION refuse_update()');
  }
}

// ---------------------------------------------------------------------------
// Other sources
// ---------------------------------------------------------------------------

describe('other sources', () => {
  it('imports a small valid file without a sha256 check, by path and as a file: URL', async () => {
    const db = await freshDatabase();
    const path = await writeCsv('valid.csv', [HEADER, ...VALID_LINES]);

    const report = await importMunicipalities(db.sequelize, { source: path, sha256: undefined });

    expect(report).toEqual({ source: path, sha256: await sha256Of(path), rows: 3, inserted: 3, updated: 0, unchanged: 0 });
    expect(await loadAll(db)).toEqual([BOA_VISTA, SAO_PAULO, BRASILIA]);

    const url = pathToFileURL(path).href;
    expect(await importMunicipalities(db.sequelize, { source: url, sha256: undefined })).toMatchObject({
      source: url,
      rows: 3,
      inserted: 0,
      unchanged: 3,
    });
  });

  describe('over http', () => {
    let server: Awaited<ReturnType<typeof startCsvServer>>;

    beforeAll(async () => {
      server = await startCsvServer(await readFile(SHARED_MUNICIPIOS));
    });

    afterAll(async () => {
      await server.close();
    });

    it('downloads and imports the shared file, checked against its sha256', async () => {
      const db = await freshDatabase();
      const source = `${server.baseUrl}/municipios.csv`;

      const report = await importMunicipalities(db.sequelize, { source, sha256: SHARED_MUNICIPIOS_SHA256 });

      expect(report).toEqual({ source, sha256: SHARED_MUNICIPIOS_SHA256, rows: SHARED_ROWS, inserted: SHARED_ROWS, updated: 0, unchanged: 0 });
      expect(await loadAll(db)).toHaveLength(SHARED_ROWS);
      expect(server.requests).toContain('/municipios.csv');
    });

    it('rejects a URL that answers 404, saying so, and writes nothing', async () => {
      const db = await freshDatabase();
      const source = `${server.baseUrl}/missing.csv`;

      const error = await importFailure(importMunicipalities(db.sequelize, { source, sha256: SHARED_MUNICIPIOS_SHA256 }));

      expect(error.message).toContain(source);
      expect(error.message).toMatch(/HTTP 404/);
      expect(await loadAll(db)).toEqual([]);
    });
  });
});
