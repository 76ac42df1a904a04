/**
 * sendEnvelope writes an answer nobody watches itself, past Express's res.json: the bytes, status and
 * headers must be those res.json gives, and whatever watches res.json (the response validator, the
 * idempotency store) or relies on Express's freshness check (an ETag) must still get Express's path.
 */
import type { AddressInfo } from 'node:net';
import { get, type Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendEnvelope } from '../src/http/envelope.js';

const data = { id: 7, nome: 'São Paulo', tags: ['ç', '"aspas"', '\u2028'], vazio: null };
let server: Server;
let baseUrl: string;
/** What the watching middleware saw go through res.json. */
const watched: unknown[] = [];

const withRequestId: RequestHandler = (_req, res, next) => {
  res.locals.requestId = 'req-1';
  next();
};

beforeAll(async () => {
  const app = express();
  app.set('etag', false); // as src/app.ts
  app.use(withRequestId);
  app.get('/fast', (_req, res) => sendEnvelope(res, 200, data, 'Um município.'));
  app.get('/express', (_req, res) => {
    res.status(200).json({ success: true, data, message: 'Um município.', request_id: String(res.locals.requestId) });
  });
  app.get('/created', (_req, res) => sendEnvelope(res, 201, data, 'Criado.'));
  app.get('/tagged', (_req, res) => {
    res.setHeader('ETag', '"v3"');
    sendEnvelope(res, 200, data, 'Com versão.');
  });
  app.get('/watched', (_req, res) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      watched.push(body);
      return json(body);
    };
    sendEnvelope(res, 200, data, 'Observado.');
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const headersOf = (response: Response) => ({ type: response.headers.get('content-type'), length: response.headers.get('content-length') });

describe('sendEnvelope', () => {
  it("answers with the bytes, status and headers Express's res.json gives", async () => {
    const [fast, viaExpress] = await Promise.all([fetch(`${baseUrl}/fast`), fetch(`${baseUrl}/express`)]);
    expect(fast.status).toBe(200);
    expect(headersOf(fast)).toEqual(headersOf(viaExpress));
    expect(headersOf(fast).type).toBe('application/json; charset=utf-8');
    const text = await fast.text();
    expect(text).toBe(await viaExpress.text());
    expect(Number(fast.headers.get('content-length'))).toBe(Buffer.byteLength(text)); // bytes, not characters
    expect(JSON.parse(text)).toEqual({ success: true, data, message: 'Um município.', request_id: 'req-1' });
  });

  it('sends the status it is given', async () => {
    expect((await fetch(`${baseUrl}/created`)).status).toBe(201);
  });

  it('answers a HEAD with the headers and no body', async () => {
    const [head, get] = await Promise.all([fetch(`${baseUrl}/fast`, { method: 'HEAD' }), fetch(`${baseUrl}/fast`)]);
    expect(head.status).toBe(200);
    expect(headersOf(head)).toEqual(headersOf(get));
    expect(await head.text()).toBe('');
  });

  it("leaves an answer with an ETag to Express, which answers 304 to an If-None-Match that holds it", async () => {
    expect((await fetch(`${baseUrl}/tagged`)).status).toBe(200);
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request, and Express
    // then answers 200, as it must.
    const again = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      get(`${baseUrl}/tagged`, { headers: { 'If-None-Match': '"v3"' } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode, body }));
      }).on('error', reject);
    });
    expect(again).toEqual({ status: 304, body: '' });
  });

  it('goes through res.json when a middleware watches it', async () => {
    const response = await fetch(`${baseUrl}/watched`);
    expect(response.status).toBe(200);
    expect(watched).toEqual([{ success: true, data, message: 'Observado.', request_id: 'req-1' }]);
  });
});
