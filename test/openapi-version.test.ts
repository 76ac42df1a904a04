/**
 * Proof for the OpenAPI 3.1 choice (see info.description in the spec): express-openapi-validator,
 * the validator the server is built on, loads the spec, honours 3.1's nullable type lists in both
 * directions, and accepts the request bodies the contract declares on two GET operations.
 * (The Prism side of the proof is test/mock.test.ts; the openapi-typescript side is
 * test/sdk-types.test.ts, checked by `tsc`.)
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractPath, responseExample } from './helpers/spec.js';

const candidateEnvelope = responseExample('/api/entidade/data/', 'get', '200', 'candidate') as {
  data: Record<string, unknown>;
};

/** What the stand-in handler answers; each test sets it. */
let nextResponseBody: unknown = candidateEnvelope;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  const app = express();
  app.use(express.json());
  app.use(express.text());
  app.use(
    OpenApiValidator.middleware({
      apiSpec: contractPath,
      validateApiSpec: true,
      validateRequests: true,
      validateResponses: true,
    }),
  );
  app.use((_req, res) => {
    res.status(200).json(nextResponseBody);
  });
  const reportValidationError: ErrorRequestHandler = (err, _req, res, _next) => {
    res.status(err.status ?? 500).json({ message: err.message, errors: err.errors ?? [] });
  };
  app.use(reportValidationError);
  await new Promise<void>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

const auth = { Authorization: 'Token test-key' };

describe('express-openapi-validator on the OpenAPI 3.1 spec', () => {
  it('loads and validates the spec itself', async () => {
    nextResponseBody = responseExample('/api/municipios/', 'get', '200', 'distritoFederal');
    const response = await fetch(`${baseUrl}/api/municipios/?codigo_uf=53`);
    expect(response.status).toBe(200);
  });

  it('accepts null where the spec says [type, "null"] in a request body', async () => {
    nextResponseBody = candidateEnvelope;
    const body = { nome: 'Maria da Silva Santos', nr_urna: null, municipioBase: null };
    const response = await fetch(`${baseUrl}/api/entidade/add/?tp=candidato`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
  });

  it('still rejects a wrong type in a nullable field', async () => {
    const response = await fetch(`${baseUrl}/api/entidade/add/`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ nome: 'Maria', nr_urna: 'treze' }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('nr_urna');
  });

  it('accepts a response with nulls in nullable fields and rejects one with a wrong type', async () => {
    nextResponseBody = { ...candidateEnvelope, data: { ...candidateEnvelope.data, nr_urna: null } };
    const valid = await fetch(`${baseUrl}/api/entidade/data/?id=12`, { headers: auth });
    expect(valid.status).toBe(200);

    nextResponseBody = { ...candidateEnvelope, data: { ...candidateEnvelope.data, nr_urna: 'treze' } };
    const invalid = await fetch(`${baseUrl}/api/entidade/data/?id=12`, { headers: auth });
    expect(invalid.status).toBe(500);
    expect(JSON.stringify(await invalid.json())).toContain('nr_urna');
  });

  it('accepts the optional JSON body the contract declares on GET /api/sms/list_credentials/', async () => {
    nextResponseBody = responseExample('/api/sms/list_credentials/', 'get', '200', 'credentials');
    const body = { titulo: 'Lembrete', credencial: 3, mensagem: { recipient_list_str: '+5511987654321', mensagem: 'Oi' } };
    // undici's fetch refuses a GET body, so send it with node:http.
    const status = await rawRequest('GET', '/api/sms/list_credentials/', JSON.stringify(body), 'application/json');
    expect(status).toBe(200);
    expect(await rawRequest('GET', '/api/sms/list_credentials/')).toBe(200);
  });

  it('accepts the optional text/plain body the contract declares on GET /api/usuario/{user_id}/', async () => {
    nextResponseBody = responseExample('/api/usuario/{user_id}/', 'get', '200', 'operator');
    expect(await rawRequest('GET', '/api/usuario/2/', 'perfil', 'text/plain')).toBe(200);
    expect(await rawRequest('GET', '/api/usuario/2/')).toBe(200);
  });
});

async function rawRequest(method: string, path: string, body?: string, contentType?: string): Promise<number> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...auth };
    if (body !== undefined && contentType) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const req = request(`${baseUrl}${path}`, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}
