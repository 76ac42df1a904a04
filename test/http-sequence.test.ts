/**
 * inSequence (src/http/sequence.ts): the front middlewares mounted as one Express layer must behave as
 * they did as separate layers: in order, stopping at an answer, and every kind of error reaching the
 * error handler with the rest of the sequence skipped.
 */
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { inSequence } from '../src/http/sequence.js';

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** Serves the sequence, then a last handler; errors are answered 599 with their message. */
async function serve(steps: Array<RequestHandler | undefined>): Promise<{ get(): Promise<{ status: number; text: string; seen: string | null }> }> {
  const app = express();
  app.use(inSequence(steps));
  app.use((_req, res) => void res.status(200).send('reached the end'));
  const onError: ErrorRequestHandler = (error: Error, _req, res, _next) => void res.status(599).send(error.message);
  app.use(onError);
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    async get() {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      return { status: response.status, text: await response.text(), seen: response.headers.get('x-seen') };
    },
  };
}

/** A step that appends its name to the X-Seen header and goes on. */
const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    const seen = res.getHeader('X-Seen');
    res.setHeader('X-Seen', seen ? `${String(seen)},${name}` : name);
    next();
  };

describe('inSequence', () => {
  it('runs the steps in order, skips the missing ones, then goes on to the next layer', async () => {
    const server = await serve([mark('a'), undefined, mark('b'), mark('c')]);
    expect(await server.get()).toEqual({ status: 200, text: 'reached the end', seen: 'a,b,c' });
  });

  it('stops at a step that answers', async () => {
    const answer: RequestHandler = (_req, res) => void res.status(204).end();
    const server = await serve([mark('a'), answer, mark('never')]);
    expect(await server.get()).toMatchObject({ status: 204, seen: 'a' });
  });

  it.each([
    ['passed to next', ((_req, _res, next) => next(new Error('passed on'))) as RequestHandler, 'passed on'],
    [
      'thrown',
      (() => {
        throw new Error('thrown');
      }) as RequestHandler,
      'thrown',
    ],
    ['a rejected promise', (async () => Promise.reject(new Error('rejected'))) as RequestHandler, 'rejected'],
  ])('sends an error %s to the error handler and skips the rest', async (_kind, failing, message) => {
    const server = await serve([mark('a'), failing, mark('never')]);
    expect(await server.get()).toEqual({ status: 599, text: message, seen: 'a' });
  });

  it('waits for an asynchronous step before the next one', async () => {
    const slow: RequestHandler = (_req, res, next) => {
      setTimeout(() => {
        res.setHeader('X-Seen', `${String(res.getHeader('X-Seen'))},slow`);
        next();
      }, 20);
    };
    const server = await serve([mark('a'), slow, mark('b')]);
    expect(await server.get()).toMatchObject({ status: 200, seen: 'a,slow,b' });
  });
});
