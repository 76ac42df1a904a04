/**
 * What text the API takes: well-formed Unicode without NUL. JSON can spell two things that are not
 * text a database keeps as sent: `"\u0000"` (PostgreSQL cannot store it; on SQLite it ends a statement
 * early) and a lone UTF-16 surrogate (`"\ud800x"`, half of a pair), which JSON.parse keeps as it is and
 * the drivers write as U+FFFD, so what is stored is not what was sent. After the contract validator
 * (which names the operation), before anything reads the body:
 * - in our own operations' bodies, a string (or a key) holding either is 422 `validation_failed` with
 *   the rule `unicode`, naming the field by its dotted path;
 * - in the providers' deliveries (PROVIDER_DELIVERIES) each such character is replaced by U+FFFD, in the
 *   parsed body and query, and the delivery goes on: a provider's odd byte must not lose a receipt. Their
 *   signatures are checked over the raw bytes and the URL as sent, which this leaves alone.
 * Query and path parameters of our own operations are judged by refuseNulCharacters (validation.ts); a
 * lone surrogate cannot reach them (percent-decoding makes U+FFFD of a broken UTF-8 sequence).
 */
import type { RequestHandler } from 'express';
import { ApiError, type ErrorDetail } from './errors.js';
import { operationIdOf } from './operations.js';

/** The callbacks providers send us (SMS receipts and replies, the social network's events, messages and data-removal notices). */
export const PROVIDER_DELIVERIES: ReadonlySet<string> = new Set([
  'receiveSmsDeliveryReceipt',
  'receiveSmsWebhook',
  'receiveSocialnetEvents',
  'receiveSocialnetRemoval',
]);

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one (code units: no `u` flag). */
const NOT_TEXT = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_TEXT_ALL = new RegExp(NOT_TEXT.source, 'g');

export function wellFormedText(deliveries: ReadonlySet<string> = PROVIDER_DELIVERIES): RequestHandler {
  return (req, _res, next) => {
    const operationId = operationIdOf(req);
    if (operationId && deliveries.has(operationId)) {
      makeText(req.body);
      makeText(req.query);
      return next();
    }
    if (typeof req.body !== 'object' || req.body === null) return next();
    const fields = fieldsNotText(req.body);
    if (fields.length === 0) return next();
    // sendError lists the first MAX_DETAILS of them and counts the rest in the message.
    const details: ErrorDetail[] = fields.map((field) => ({
      location: 'body',
      field,
      rule: 'unicode',
      message: 'must be well-formed Unicode text: no NUL character (U+0000) and no lone UTF-16 surrogate (U+D800 to U+DFFF)',
    }));
    next(new ApiError(422, 'validation_failed', 'The request body is invalid.', details));
  };
}

/** Dotted paths (`lista.0.nome`, as the validator names fields) of the strings and keys that are not text; iterative, so depth is no risk. */
function fieldsNotText(root: object): string[] {
  const found: string[] = [];
  const pending: Array<[string, unknown]> = [['', root]];
  while (pending.length > 0) {
    const [path, value] = pending.pop()!;
    if (typeof value === 'string') {
      if (NOT_TEXT.test(value)) found.push(path);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        if (NOT_TEXT.test(key)) found.push(at);
        else pending.push([at, item]);
      }
    }
  }
  return found.reverse();
}

const replacedText = (text: string) => text.replace(NOT_TEXT_ALL, '\uFFFD');

/** Makes every string and key under `root` text, where it stands; iterative, so depth is no risk. */
function makeText(root: unknown): void {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const container = pending.pop();
    if (typeof container !== 'object' || container === null) continue;
    const record = container as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (typeof value === 'string' && NOT_TEXT.test(value)) record[key] = replacedText(value);
      else if (typeof value === 'object' && value !== null) pending.push(value);
      if (NOT_TEXT.test(key)) {
        const made = replacedText(key);
        if (!(made in record)) record[made] = record[key];
        delete record[key];
      }
    }
  }
}
