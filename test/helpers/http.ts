/** Plain HTTP calls for tests of the real app, and the one assertion every error answer must pass. */
import { expect } from 'vitest';

export interface Result {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A request to the app at `baseUrl`; an object body is sent as JSON, a string body as is (to send broken JSON). */
export async function request(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Result> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  // fetch says only "fetch failed"; its cause (a refused or reset connection, a timeout) says why.
  const response = await fetch(baseUrl + path, init).catch((error: Error) => {
    throw new Error(`${method} ${path}: ${error.message}: ${String(error.cause ?? 'no cause given')}`, { cause: error });
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** The answer is `status` in the error model with `code`, carrying the request id of its response. */
export function expectError(result: Result, status: number, code: string): void {
  expect(result.status, result.text).toBe(status);
  expect(result.body).toEqual({
    success: false,
    error: { code, message: expect.any(String), details: expect.any(Array) },
    request_id: result.headers.get('x-request-id'),
  });
}
