/**
 * X-Request-Id: keep the client's id when it is 1 to 128 printable ASCII characters, otherwise answer 400;
 * generate a UUID when none is sent. The id is echoed in the response header and in every body's
 * `request_id`, and tags every log line of the request.
 *
 * Two steps, so that a rejected request is still logged: `requestId` assigns the id first thing, and
 * `rejectInvalidRequestId`, mounted after the request logger, answers the 400.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { badRequest } from './errors.js';

const VALID_REQUEST_ID = /^[\x21-\x7E]{1,128}$/;

export const requestId: RequestHandler = (req, res, next) => {
  const sent = req.get('X-Request-Id');
  const valid = sent === undefined || VALID_REQUEST_ID.test(sent);
  const id = sent !== undefined && valid ? sent : randomUUID();
  res.locals.requestId = id;
  res.locals.invalidRequestId = !valid;
  res.setHeader('X-Request-Id', id);
  next();
};

export const rejectInvalidRequestId: RequestHandler = (_req, res, next) => {
  if (!res.locals.invalidRequestId) return next();
  next(
    badRequest('The X-Request-Id header must be 1 to 128 printable ASCII characters without spaces.', [
      { location: 'header', field: 'X-Request-Id', rule: 'pattern', message: 'must match ^[\\x21-\\x7E]{1,128}$' },
    ]),
  );
};
