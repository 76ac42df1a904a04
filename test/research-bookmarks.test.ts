/**
 * Research bookmarks through the real app and the contract validator (responses validated too): list,
 * save and remove the caller's own. Bookmarks are personal, admins included: another user's bookmark is
 * 404 like a missing one. A page is saved once per user (addresses compared after normalisation), the
 * exact same save again is a harmless 200, and a user keeps at most 1000 bookmarks.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BOOKMARKS_PER_USER } from '../src/research/bookmarks.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

const LIST = '/api/research/get_user_research_bookmarks/';
const ADD = '/api/research/add_research_bookmark/';
const REMOVE = '/api/research/remove_research_bookmark/';

let app: TestApp;
const send = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  request(app.baseUrl, method, path, headers, body);
let owner: TestUser;
let other: TestUser;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  owner = await createUser(app);
  other = await createUser(app);
  admin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
});

const list = (user: TestUser) => send('GET', LIST, user.headers);
const add = (user: TestUser, body: unknown, headers: Record<string, string> = {}) => send('POST', ADD, { ...user.headers, ...headers }, body);
const remove = (user: TestUser, body: unknown) => send('POST', REMOVE, user.headers, body);

const BOOKMARK_FIELDS = ['created_at', 'id', 'notes', 'source', 'title', 'url'];

let titles = 0;
/** A bookmark body for a page of its own. */
function newBookmark(fields: Record<string, unknown> = {}) {
  titles += 1;
  return { title: `Pesquisa ${titles}`, url: `https://www.exemplo.com.br/pesquisas/${titles}`, ...fields };
}

describe('listResearchBookmarks', () => {
  it('answers an empty list to a user without bookmarks', async () => {
    const fresh = await createUser(app);
    const result = await list(fresh);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ success: true, data: [], message: '0 bookmarks.', request_id: result.headers.get('x-request-id') });
  });

  it('lists only the caller\'s bookmarks, newest first, to the owner, another user and an admin alike', async () => {
    const reader = await createUser(app);
    const first = await add(reader, newBookmark());
    const second = await add(reader, newBookmark());
    await add(other, newBookmark());
    await add(admin, newBookmark());

    const own = await list(reader);
    expect(own.status).toBe(200);
    expect(own.body.data.map((bookmark: { id: number }) => bookmark.id)).toEqual([second.body.data.id, first.body.data.id]);
    expect(own.body.data[0]).toEqual(second.body.data);
    expect(own.body.message).toBe('2 bookmarks.');
    for (const bookmark of own.body.data) expect(Object.keys(bookmark).sort()).toEqual(BOOKMARK_FIELDS);

    // Admins see only their own too.
    const adminList = await list(admin);
    const readerIds = new Set(own.body.data.map((bookmark: { id: number }) => bookmark.id));
    expect(adminList.body.data.some((bookmark: { id: number }) => readerIds.has(bookmark.id))).toBe(false);
    const otherList = await list(other);
    expect(otherList.body.data.some((bookmark: { id: number }) => readerIds.has(bookmark.id))).toBe(false);
  });

  it('answers 401 without a valid key', async () => {
    expectError(await send('GET', LIST), 401, 'unauthorized');
    expectError(await send('GET', LIST, { Authorization: 'Token plq_not-a-key' }), 401, 'unauthorized');
  });
});

describe('addResearchBookmark', () => {
  it('saves a bookmark (201), trimmed, with blank source and notes stored as null', async () => {
    const result = await add(owner, { title: '  Pesquisa Datafolha — SP  ', url: 'https://www.exemplo.com.br/pesquisas/sp#tabela-2', source: '  ', notes: '' });
    expect(result.status, result.text).toBe(201);
    expect(result.body).toEqual({
      success: true,
      data: {
        id: expect.any(Number),
        title: 'Pesquisa Datafolha — SP',
        url: 'https://www.exemplo.com.br/pesquisas/sp#tabela-2',
        source: null,
        notes: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
      message: `Bookmark ${result.body.data.id} saved.`,
      request_id: result.headers.get('x-request-id'),
    });
    expect(Math.abs(Date.parse(result.body.data.created_at) - Date.now())).toBeLessThan(60_000);
    const stored = (await list(owner)).body.data.find((bookmark: { id: number }) => bookmark.id === result.body.data.id);
    expect(stored).toEqual(result.body.data);
  });

  it('keeps source and notes, and percent-encodes a non-ASCII address', async () => {
    const result = await add(owner, {
      title: 'Eleição municipal',
      url: 'https://dadosabertos.exemplo.gov.br/eleição/2024',
      source: 'Dados abertos',
      notes: 'Comparar com 2020.',
    });
    expect(result.status, result.text).toBe(201);
    expect(result.body.data).toMatchObject({
      url: 'https://dadosabertos.exemplo.gov.br/elei%C3%A7%C3%A3o/2024',
      source: 'Dados abertos',
      notes: 'Comparar com 2020.',
    });
  });

  it('answers 200 with the existing bookmark when the same page is saved again with the same fields, however pasted', async () => {
    const body = newBookmark({ source: 'Instituto Exemplo', notes: 'Rodada de outubro.' });
    const created = await add(owner, body);
    expect(created.status).toBe(201);
    const before = (await list(owner)).body.data.length;

    const again = await add(owner, body);
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toEqual(created.body.data);
    expect(again.body.message).toMatch(/nothing changed/);

    const pastedOtherwise = body.url.replace('https://www.', 'HTTP://') + '/?utm_source=whatsapp#inicio';
    const samePage = await add(owner, { ...body, url: pastedOtherwise, title: ` ${body.title} ` });
    expect(samePage.status, samePage.text).toBe(200);
    expect(samePage.body.data).toEqual(created.body.data);
    expect((await list(owner)).body.data).toHaveLength(before);
  });

  it('answers 409 naming the existing bookmark when the same page is saved with other fields', async () => {
    const body = newBookmark({ notes: 'primeira leitura' });
    const created = await add(owner, body);
    const conflict = await add(owner, { ...body, notes: 'segunda leitura' });
    expectError(conflict, 409, 'conflict');
    expect(conflict.body.error.message).toContain(`bookmark ${created.body.data.id}`);
    expect(conflict.body.error.details).toEqual([
      { location: 'body', field: 'url', rule: 'unique_per_user', message: expect.any(String), value: created.body.data.id },
    ]);
  });

  it('saves a page once when the same save arrives several times at once', async () => {
    const body = newBookmark();
    const results = await Promise.all(Array.from({ length: 6 }, () => add(owner, body)));
    expect(results.map((result) => result.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((result) => result.body.data.id)).size).toBe(1);
  });

  it('lets two users save the same page', async () => {
    const body = newBookmark();
    expect((await add(owner, body)).status).toBe(201);
    expect((await add(other, body)).status).toBe(201);
  });

  it('replays the first answer for a retried Idempotency-Key', async () => {
    const body = newBookmark();
    const key = `bookmark-${Date.now()}`;
    const first = await add(owner, body, { 'Idempotency-Key': key });
    const retry = await add(owner, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
  });

  it.each([
    ['a missing title', { url: 'https://exemplo.com.br/a' }, 'title', 'required'],
    ['a missing url', { title: 'Sem endereço' }, 'url', 'required'],
    ['a blank title', { title: '   ', url: 'https://exemplo.com.br/b' }, 'title', 'not_blank'],
    ['a title of 301 characters', { title: 't'.repeat(301), url: 'https://exemplo.com.br/c' }, 'title', 'maxLength'],
    ['notes of 5001 characters', { title: 'Notas longas', url: 'https://exemplo.com.br/d', notes: 'n'.repeat(5001) }, 'notes', 'maxLength'],
    ['a source that is not text', { title: 'Fonte', url: 'https://exemplo.com.br/e', source: 7 }, 'source', 'type'],
    ['a relative url', { title: 'Relativo', url: '/pesquisas/1' }, 'url', 'absolute_http_url'],
    ['an ftp url', { title: 'FTP', url: 'ftp://exemplo.com.br/arquivo.csv' }, 'url', 'absolute_http_url'],
    ['a url with credentials', { title: 'Credenciais', url: 'https://ana:segredo@exemplo.com.br/' }, 'url', 'no_credentials'],
  ])('answers 422 for %s, naming the field', async (_case, body, field, rule) => {
    const result = await add(owner, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
    expect(result.text).not.toContain('segredo');
  });

  it('names every problem of the body at once', async () => {
    const result = await add(owner, { title: ' ', url: 'exemplo.com.br' });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details.map((detail: { field: string; rule: string }) => `${detail.field}:${detail.rule}`).sort()).toEqual([
      'title:not_blank',
      'url:absolute_http_url',
    ]);
  });

  it('answers 400 to a body that is not JSON', async () => {
    expectError(await add(owner, '{"title": "x", '), 400, 'bad_request');
  });

  it('answers 401 without a valid key, before looking at the body', async () => {
    expectError(await send('POST', ADD, {}, newBookmark()), 401, 'unauthorized');
    expectError(await send('POST', ADD, {}, { title: 7 }), 401, 'unauthorized');
  });

  it(`answers 409 once the user keeps ${MAX_BOOKMARKS_PER_USER} bookmarks, and 201 again after a removal`, async () => {
    const collector = await createUser(app);
    const now = new Date();
    const rows = Array.from({ length: MAX_BOOKMARKS_PER_USER - 1 }, (_, i) => ({
      user_id: collector.user.id,
      title: `Item ${i}`,
      url: `https://exemplo.com.br/acervo/${i}`,
      url_key: `exemplo.com.br/acervo/${i}`,
      source: null,
      notes: null,
      created_at: now,
    }));
    await app.sequelize.getQueryInterface().bulkInsert('research_bookmarks', rows);
    const last = await add(collector, newBookmark());
    expect(last.status, last.text).toBe(201);

    const over = await add(collector, newBookmark());
    expectError(over, 409, 'conflict');
    expect(over.body.error.details).toEqual([expect.objectContaining({ rule: 'max_bookmarks' })]);
    // Saving an existing page again is still the harmless 200.
    expect((await add(collector, { title: 'Item 0', url: 'https://exemplo.com.br/acervo/0' })).status).toBe(200);

    expect((await remove(collector, { id: last.body.data.id })).status).toBe(200);
    expect((await add(collector, newBookmark())).status).toBe(201);
    expect((await list(collector)).body.data).toHaveLength(MAX_BOOKMARKS_PER_USER);
  });
});

describe('removeResearchBookmark', () => {
  it('removes the caller\'s bookmark (200); removing it again is 404', async () => {
    const created = await add(owner, newBookmark());
    const id = created.body.data.id;
    const removed = await remove(owner, { id });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ success: true, data: { id, removed: true }, message: `Bookmark ${id} removed.`, request_id: removed.headers.get('x-request-id') });
    expect((await list(owner)).body.data.some((bookmark: { id: number }) => bookmark.id === id)).toBe(false);

    const again = await remove(owner, { id });
    expectError(again, 404, 'not_found');
    expect(again.body.error.details).toEqual([{ location: 'body', field: 'id', rule: 'own_bookmark', message: expect.any(String), value: id }]);
  });

  it('answers 404 to another user and to an admin, the same as for a missing id, and keeps the bookmark', async () => {
    const created = await add(owner, newBookmark());
    const id = created.body.data.id;
    const byOther = await remove(other, { id });
    const byAdmin = await remove(admin, { id });
    const missing = await remove(owner, { id: 2147483647 });
    for (const result of [byOther, byAdmin, missing]) expectError(result, 404, 'not_found');
    // Not yours and does not exist read the same, apart from the id.
    expect(byOther.body.error.message.replace(String(id), 'N')).toBe(missing.body.error.message.replace('2147483647', 'N'));
    expect((await list(owner)).body.data.some((bookmark: { id: number }) => bookmark.id === id)).toBe(true);
  });

  it.each([
    ['no id', {}, 'required'],
    ['id 0', { id: 0 }, 'minimum'],
    ['a text id', { id: 'abc' }, 'type'],
    ['an id past the integer range', { id: 2147483648 }, 'maximum'],
  ])('answers 422 for %s', async (_case, body, rule) => {
    const result = await remove(owner, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'id', rule }));
  });

  it('answers 400 to a body that is not JSON and 401 without a valid key', async () => {
    expectError(await remove(owner, '{"id":'), 400, 'bad_request');
    expectError(await send('POST', REMOVE, {}, { id: 1 }), 401, 'unauthorized');
  });
});
