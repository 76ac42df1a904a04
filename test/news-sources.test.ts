/**
 * News sources through the real app and the contract validator (responses validated too): any user
 * with a key requests a source, anyone lists them. The list is public, so it shows the source, its status
 * and dates and never who asked (the table keeps that). Sources are deduplicated by normalised address:
 * asking again, however the address is pasted and whatever the status, is 409.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request as httpRequest } from './helpers/http.js';

const LIST = '/api/news/get_requested_fonts/';
const REQUEST = '/api/news/request_font/';
const SOURCE_FIELDS = ['id', 'name', 'requested_at', 'status', 'updated_at', 'url'];

let app: TestApp;
const send = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  httpRequest(app.baseUrl, method, path, headers, body);
let requester: TestUser;
let other: TestUser;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  requester = await createUser(app, { first_name: 'Joana', last_name: 'Lima' });
  other = await createUser(app);
  admin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
});

const listPublicly = () => send('GET', LIST);
const request = (user: TestUser, body: unknown) => send('POST', REQUEST, user.headers, body);

let sites = 0;
function newSource(fields: Record<string, unknown> = {}) {
  sites += 1;
  return { name: `Jornal ${sites}`, url: `https://www.jornal${sites}.com.br/`, ...fields };
}

describe('listRequestedNewsSources (public)', () => {
  it('answers without a key, and ignores one that is sent', async () => {
    const anonymous = await listPublicly();
    expect(anonymous.status, anonymous.text).toBe(200);
    expect(anonymous.body).toEqual({ success: true, data: expect.any(Array), message: expect.stringMatching(/news sources?; page 1 of 1\.$/), request_id: anonymous.headers.get('x-request-id') });
    expect((await send('GET', LIST, requester.headers)).status).toBe(200);
  });

  it('lists the newest request first', async () => {
    const first = await request(requester, newSource());
    const second = await request(other, newSource());
    const ids = (await listPublicly()).body.data.map((source: { id: number }) => source.id);
    expect(ids.indexOf(second.body.data.id)).toBeLessThan(ids.indexOf(first.body.data.id));
    expect(ids[0]).toBe(second.body.data.id);
  });

  it('never shows who asked: not the id, username, e-mail or name of the requester', async () => {
    const created = await request(requester, newSource({ name: 'Gazeta do Sertão' }));
    expect(created.status).toBe(201);
    for (const result of [created, await listPublicly()]) {
      const sources = Array.isArray(result.body.data) ? result.body.data : [result.body.data];
      for (const source of sources) expect(Object.keys(source).sort()).toEqual(SOURCE_FIELDS);
      for (const secret of [requester.user.username, requester.user.email, 'Joana', 'requested_by', 'url_key']) expect(result.text).not.toContain(secret);
    }
    // ...while the table keeps it.
    const [rows] = await app.sequelize.query('SELECT requested_by FROM news_sources WHERE id = :id', { replacements: { id: created.body.data.id } });
    expect(rows).toEqual([{ requested_by: requester.user.id }]);
  });
});

describe('requestNewsSource', () => {
  it('requests a source (201) with its normalised address and status requested; the public list shows it', async () => {
    const result = await request(requester, { name: '  Jornal do Vale ', url: 'HTTPS://www.JornalDoVale.com.br:443/?utm_source=whatsapp#capa' });
    expect(result.status, result.text).toBe(201);
    expect(result.body).toEqual({
      success: true,
      data: {
        id: expect.any(Number),
        name: 'Jornal do Vale',
        url: 'https://www.jornaldovale.com.br/',
        status: 'requested',
        requested_at: expect.stringMatching(/Z$/),
        updated_at: result.body.data.requested_at,
      },
      message: `News source ${result.body.data.id} requested.`,
      request_id: result.headers.get('x-request-id'),
    });
    const listed = (await listPublicly()).body.data.find((source: { id: number }) => source.id === result.body.data.id);
    expect(listed).toEqual(result.body.data);
  });

  it.each([
    ['the same address', 'https://www.folhadolitoral.com.br/'],
    ['http instead of https', 'http://www.folhadolitoral.com.br/'],
    ['without www', 'https://folhadolitoral.com.br'],
    ['with a fragment and tracking', 'https://FOLHADOLITORAL.com.br/?fbclid=xyz#topo'],
  ])('answers 409 naming the existing source for %s, whoever asks', async (_case, url) => {
    const existing = (await listPublicly()).body.data.find((source: { url: string }) => source.url === 'https://www.folhadolitoral.com.br/')
      ?? (await request(requester, { name: 'Folha do Litoral', url: 'https://www.folhadolitoral.com.br/' })).body.data;
    const count = (await listPublicly()).body.data.length;
    const duplicate = await request(other, { name: 'Folha', url });
    expectError(duplicate, 409, 'conflict');
    expect(duplicate.body.error.message).toBe(`This news source was already requested (source ${existing.id}, status requested).`);
    expect(duplicate.body.error.details).toEqual([
      { location: 'body', field: 'url', rule: 'unique_source', message: `already requested as source ${existing.id} (requested)`, value: 'https://www.folhadolitoral.com.br/' },
    ]);
    expect(duplicate.text).not.toContain(requester.user.username);
    expect((await listPublicly()).body.data).toHaveLength(count);
  });

  it('answers 409 for a source already reviewed, with its status', async () => {
    const created = await request(requester, newSource());
    await app.sequelize.query("UPDATE news_sources SET status = 'rejected' WHERE id = :id", { replacements: { id: created.body.data.id } });
    const again = await request(admin, { name: 'De novo', url: created.body.data.url });
    expectError(again, 409, 'conflict');
    expect(again.body.error.message).toContain(`source ${created.body.data.id}, status rejected`);
    const listed = (await listPublicly()).body.data.find((source: { id: number }) => source.id === created.body.data.id);
    expect(listed.status).toBe('rejected');
  });

  it('keeps one source when the same request arrives several times at once', async () => {
    const body = newSource();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => request(i % 2 === 0 ? requester : other, body)));
    expect(results.map((result) => result.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('keeps the source, without its requester, when the requester\'s account is deleted', async () => {
    const leaving = await createUser(app);
    const created = await request(leaving, newSource());
    await app.accounts.models.User.destroy({ where: { id: leaving.user.id } });
    const [rows] = await app.sequelize.query('SELECT requested_by FROM news_sources WHERE id = :id', { replacements: { id: created.body.data.id } });
    expect(rows).toEqual([{ requested_by: null }]);
    expect((await listPublicly()).body.data.some((source: { id: number }) => source.id === created.body.data.id)).toBe(true);
  });

  it.each([
    ['a missing name', { url: 'https://exemplo.com.br/' }, 'name', 'required'],
    ['a missing url', { name: 'Sem endereço' }, 'url', 'required'],
    ['a blank name', { name: '  ', url: 'https://branco.com.br/' }, 'name', 'not_blank'],
    ['a name of 201 characters', { name: 'n'.repeat(201), url: 'https://longo.com.br/' }, 'name', 'maxLength'],
    ['an address without scheme', { name: 'Sem esquema', url: 'www.semesquema.com.br' }, 'url', 'absolute_http_url'],
    ['a mailto address', { name: 'Correio', url: 'mailto:redacao@correio.com.br' }, 'url', 'absolute_http_url'],
    ['an address with credentials', { name: 'Credenciais', url: 'https://ana:segredo@credenciais.com.br/' }, 'url', 'no_credentials'],
  ])('answers 422 for %s, naming the field', async (_case, body, field, rule) => {
    const result = await request(requester, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
    expect(result.text).not.toContain('segredo');
  });

  it('answers 400 to a body that is not JSON', async () => {
    expectError(await request(requester, '{"name":'), 400, 'bad_request');
  });

  it('answers 401 without a valid key', async () => {
    expectError(await send('POST', REQUEST, {}, newSource()), 401, 'unauthorized');
    expectError(await send('POST', REQUEST, { Authorization: 'Bearer plq_revoked' }, newSource()), 401, 'unauthorized');
  });
});

describe('bounded work: pages of the public list, and a cap on each user\'s open requests', () => {
  it('answers pages of 100 (the first without page), linked by a relative Link header; past the last is 404', async () => {
    const paged = await startTestApp();
    try {
      const [ana, bia, caio] = [await createUser(paged), await createUser(paged), await createUser(paged)];
      // 250 sources from three users, each under the cap of 100 open requests.
      for (const [index, user] of [...Array.from({ length: 100 }, () => ana), ...Array.from({ length: 100 }, () => bia), ...Array.from({ length: 50 }, () => caio)].entries()) {
        const created = await httpRequest(paged.baseUrl, 'POST', REQUEST, user.headers, { name: `Fonte ${index}`, url: `https://fonte${index}.exemplo.com.br/` });
        expect(created.status, created.text).toBe(201);
      }
      const first = await httpRequest(paged.baseUrl, 'GET', LIST);
      expect(first.status, first.text).toBe(200);
      expect(first.body.data).toHaveLength(100);
      expect(first.body.data[0].name).toBe('Fonte 249'); // newest first
      expect(first.body.message).toBe('250 news sources; page 1 of 3.');
      expect(first.headers.get('link')).toBe('<?page=2>; rel="next"');

      const second = await httpRequest(paged.baseUrl, 'GET', `${LIST}?page=2`);
      expect(second.body.data).toHaveLength(100);
      expect(second.headers.get('link')).toBe('<?page=3>; rel="next", <?page=1>; rel="prev"');
      const last = await httpRequest(paged.baseUrl, 'GET', `${LIST}?page=3`);
      expect(last.body.data.map((source: { name: string }) => source.name).at(-1)).toBe('Fonte 0');
      expect(last.body.data).toHaveLength(50);
      expect(last.headers.get('link')).toBe('<?page=2>; rel="prev"');
      // The pages hold every source once.
      const names = new Set([...first.body.data, ...second.body.data, ...last.body.data].map((source: { name: string }) => source.name));
      expect(names.size).toBe(250);

      const past = await httpRequest(paged.baseUrl, 'GET', `${LIST}?page=4`);
      expectError(past, 404, 'not_found');
      expect(past.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'page', value: 4 })]);
      expectError(await httpRequest(paged.baseUrl, 'GET', `${LIST}?page=0`), 400, 'bad_request');
    } finally {
      await paged.close();
    }
  }, 60_000);

  it('refuses a request beyond NEWS_MAX_OPEN_REQUESTS sources awaiting review (422 naming the count); a reviewed one frees a place', async () => {
    const capped = await startTestApp({ newsMaxOpenRequests: 3 });
    try {
      const user = await createUser(capped);
      const ask = (n: number) => httpRequest(capped.baseUrl, 'POST', REQUEST, user.headers, { name: `Limite ${n}`, url: `https://limite${n}.exemplo.com.br/` });
      const created = [];
      for (const n of [1, 2, 3]) {
        const answer = await ask(n);
        expect(answer.status, answer.text).toBe(201);
        created.push(answer.body.data.id);
      }
      const refused = await ask(4);
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details).toEqual([
        { location: 'body', field: 'url', rule: 'max_open_requests', message: 'you have 3 sources awaiting review, the most allowed (3); request more once some are reviewed', value: 3 },
      ]);
      // Parallel requests cannot pass the cap together.
      await capped.sequelize.query("UPDATE news_sources SET status = 'monitoring' WHERE id = :id", { replacements: { id: created[0] } });
      const racing = await Promise.all([5, 6, 7, 8].map((n) => ask(n)));
      expect(racing.map((answer) => answer.status).sort()).toEqual([201, 422, 422, 422]);
      // Another user has a cap of their own.
      const other = await createUser(capped);
      expect((await httpRequest(capped.baseUrl, 'POST', REQUEST, other.headers, { name: 'Outra', url: 'https://outra.exemplo.com.br/' })).status).toBe(201);
    } finally {
      await capped.close();
    }
  });
});
