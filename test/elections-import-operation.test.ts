/**
 * The admins' import operations (issue 22; src/elections/tse/imports.ts): `startElectionsImport` queues
 * an import of the court's files from an allowed URL as a job, and `getElectionsImport` follows it to
 * its report. Only platform admins; only allowed hosts; one import at a time; a wrong digest fails for
 * good with nothing written. The files are the generated sample of helpers/court-files.ts, served on a
 * loopback port this test allows over plain http (ELECTIONS_IMPORT_HOSTS=http://127.0.0.1).
 * On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { SAMPLE_CANDIDACIES, sampleZip } from './helpers/court-files.js';

const start = appsClosedAfterEach();
const ZIP_PATH = '/estatistica/sead/odsele/consulta_cand/consulta_cand_2024.zip';

let files: { baseUrl: string; holdMs: number; close(): Promise<void> };

beforeAll(async () => {
  const zip = await sampleZip({ withBrasil: false });
  const state = { holdMs: 0 };
  // Answers the zip, after `holdMs` (to keep an import running while another is asked for).
  const server: Server = createServer((req, res) => {
    if (req.url !== ZIP_PATH) {
      res.writeHead(404).end();
      return;
    }
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip), state.holdMs);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  files = {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get holdMs() {
      return state.holdMs;
    },
    set holdMs(value: number) {
      state.holdMs = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
});

afterAll(async () => {
  await files?.close();
});

const startImport = (app: TestApp, caller: TestUser, body: unknown): Promise<Result> => request(app.baseUrl, 'POST', '/api/elections/imports/', caller.headers, body);
const readImport = (app: TestApp, caller: TestUser, id: string): Promise<Result> => request(app.baseUrl, 'GET', `/api/elections/imports/${id}/`, caller.headers);

async function finished(app: TestApp, admin: TestUser, id: string): Promise<Result> {
  return waitFor(
    async () => {
      const read = await readImport(app, admin, id);
      return ['completed', 'failed'].includes(read.body.data?.state) ? read : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `import ${id} to end` },
  );
}

async function candidacies(app: TestApp): Promise<number> {
  const [row] = (await app.sequelize.query('SELECT COUNT(*) AS n FROM tse_candidacies', { type: 'SELECT' })) as Array<{ n: number | string }>;
  return Number(row!.n);
}

describe('startElectionsImport and getElectionsImport', () => {
  it('queue an import that platform admins follow to its report; the same file again changes nothing', async () => {
    const app = await start({ withJobs: true, withMunicipalities: true, electionsImportHosts: ['http://127.0.0.1'] });
    const admin = await createAdmin(app);
    const queued = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
    expect(queued.status, queued.text).toBe(201);
    expect(queued.body.data).toMatchObject({ state: 'queued', rows_read: 0, requested_by: admin.user.id, report: null, error: null, sha256: null });
    const done = await finished(app, admin, queued.body.data.id);
    expect(done.body.data.state, done.text).toBe('completed');
    const report = done.body.data.report;
    expect(report).toMatchObject({ source: `${files.baseUrl}${ZIP_PATH}`, rejected: 0 });
    expect(report.inserted).toBeGreaterThan(0);
    expect(report.rows).toBe(report.inserted + report.updated + report.unchanged + report.rejected);
    expect(done.body.data.rows_read).toBe(report.rows);
    expect(await candidacies(app)).toBe(report.inserted);
    expect(report.inserted).toBeLessThanOrEqual(SAMPLE_CANDIDACIES);

    // Again, with the digest the first import measured: every line unchanged.
    const again = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}`, sha256: report.sha256 });
    const second = await finished(app, admin, again.body.data.id);
    expect(second.body.data.report).toMatchObject({ inserted: 0, updated: 0, unchanged: report.rows - report.rejected });
  });

  it('fails for good on a wrong digest, writing nothing, with the reason', async () => {
    const app = await start({ withJobs: true, withMunicipalities: true, electionsImportHosts: ['http://127.0.0.1'] });
    const admin = await createAdmin(app);
    const queued = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}`, sha256: 'a'.repeat(64) });
    const done = await finished(app, admin, queued.body.data.id);
    expect(done.body.data).toMatchObject({ state: 'failed', report: null });
    expect(done.body.data.error).toMatch(/sha256 is [0-9a-f]{64}, not the expected a{64}; nothing was written/);
    expect(await candidacies(app)).toBe(0);
  });

  it('runs one import at a time: 409 naming the one under way', async () => {
    const app = await start({ withJobs: true, withMunicipalities: true, electionsImportHosts: ['http://127.0.0.1'] });
    const admin = await createAdmin(app);
    files.holdMs = 1_500;
    try {
      const first = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
      expect(first.status).toBe(201);
      const second = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
      expectError(second, 409, 'conflict');
      expect(second.body.error.details[0]).toMatchObject({ field: 'source', rule: 'one_import_at_a_time', message: expect.stringContaining(first.body.data.id) });
      expect((await finished(app, admin, first.body.data.id)).body.data.state).toBe('completed');
      // Once it ended, another may start.
      expect((await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` })).status).toBe(201);
    } finally {
      files.holdMs = 0;
    }
  });

  it('accepts only http(s) URLs on an allowed host, names the rule, and queues nothing', async () => {
    const app = await start({ withJobs: true });
    const admin = await createAdmin(app);
    const elsewhere = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
    expectError(elsewhere, 422, 'validation_failed');
    expect(elsewhere.body.error.details).toEqual([expect.objectContaining({ field: 'source', rule: 'allowed_host', message: 'must be on one of the hosts cdn.tse.jus.br, dadosabertos.tse.jus.br' })]);
    const path = await startImport(app, admin, { source: '/etc/passwd' });
    expect(path.body.error.details).toEqual([expect.objectContaining({ field: 'source', rule: 'http_url' })]);
    const digest = await startImport(app, admin, { source: 'https://cdn.tse.jus.br/x.zip', sha256: 'not-hex' });
    expectError(digest, 422, 'validation_failed');
    expect(digest.body.error.details[0]).toMatchObject({ field: 'sha256', rule: 'pattern' });
    const [row] = (await app.sequelize.query('SELECT COUNT(*) AS n FROM tse_imports', { type: 'SELECT' })) as Array<{ n: number | string }>;
    expect(Number(row!.n)).toBe(0);
  });

  it('accepts plain http only on a host ELECTIONS_IMPORT_HOSTS lists with http://', async () => {
    const app = await start({ withJobs: true, electionsImportHosts: ['127.0.0.1'] });
    const admin = await createAdmin(app);
    const plain = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
    expectError(plain, 422, 'validation_failed');
    expect(plain.body.error.details).toEqual([expect.objectContaining({ field: 'source', rule: 'https', message: 'must be an https URL', value: `${files.baseUrl}${ZIP_PATH}` })]);
    const [row] = (await app.sequelize.query('SELECT COUNT(*) AS n FROM tse_imports', { type: 'SELECT' })) as Array<{ n: number | string }>;
    expect(Number(row!.n)).toBe(0);
  });

  it('is for platform admins: 403 to anyone else, 404 for an unknown import', async () => {
    const app = await start({ withJobs: true, electionsImportHosts: ['http://127.0.0.1'] });
    const [admin, user] = [await createAdmin(app), await createUser(app)];
    expectError(await startImport(app, user, { source: `${files.baseUrl}${ZIP_PATH}` }), 403, 'forbidden');
    const queued = await startImport(app, admin, { source: `${files.baseUrl}/missing.zip` });
    expectError(await readImport(app, user, queued.body.data.id), 403, 'forbidden');
    const unknown = await readImport(app, admin, '0b7c6a4e-1f2d-4e3a-9b8c-7d6e5f4a3b2c');
    expectError(unknown, 404, 'not_found');
    expect(unknown.body.error.details[0]).toMatchObject({ field: 'import_id', rule: 'existing_import' });
  });

  it('answers 503 and keeps nothing under way when the job queue does not take the import', async () => {
    const app = await start({ electionsImportHosts: ['http://127.0.0.1'] }); // no job queue
    const admin = await createAdmin(app);
    const refused = await startImport(app, admin, { source: `${files.baseUrl}${ZIP_PATH}` });
    expectError(refused, 503, 'service_unavailable');
    expect(refused.headers.get('retry-after')).toBe('60');
    // The refused import does not block the next one.
    const [row] = (await app.sequelize.query("SELECT COUNT(*) AS n FROM tse_imports WHERE state IN ('queued', 'running')", { type: 'SELECT' })) as Array<{ n: number | string }>;
    expect(Number(row!.n)).toBe(0);
  });
});
