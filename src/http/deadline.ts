/**
 * The request deadline (REQUEST_DEADLINE_MS, 30 s by default): how long an operation may work once its
 * request was received (REQUEST_TIMEOUT_MS bounds receiving it). When it passes, the request's running
 * statements are cancelled and its transactions roll back (db/deadlines.ts); only once none of its
 * statements runs and none of its transactions is open does the client get 503 `service_unavailable`
 * with Retry-After, and from then on nothing of that request may be applied (even a COMMIT is refused).
 * A 503 is never stored as an idempotent answer (idempotency.ts releases the key first), so a retry with
 * the same Idempotency-Key runs once: a write is never both refused and applied.
 *
 * The request's own error path usually answers first (a cancelled statement is an outage, 503 too);
 * this answers when it does not (a request that was between statements). A statement that cannot be
 * cancelled (the database unreachable) is waited for at most SETTLE_BOUND_MS more.
 *
 * Exempt, with bounds of their own: the inbox's long poll (its `wait`), the CSV and data exports (they
 * stream), and the imports (bounded by their size and BODY_LIMIT or run as jobs). The read lane's GETs
 * (read-lane.ts) write nothing and are bounded by the statement timeout.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { Deadline, withinDeadline } from '../db/deadlines.js';
import { sendError, serviceUnavailable } from './errors.js';
import { operationIdOf } from './operations.js';

export const DEADLINE_EXEMPT: ReadonlySet<string> = new Set([
  'listInboxChanges',
  'exportSmsCampaignMessages',
  'exportMyData',
  'importContacts',
  'importMonitorMetrics',
  'startElectionsImport',
]);

/** How long the request's own error path has, once its work settled, to answer by itself. */
const OWN_ANSWER_GRACE_MS = 50;
/** How long a statement that does not stop when cancelled is waited for before the client is answered anyway. */
const SETTLE_BOUND_MS = 5_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Mounted after the contract validator (the operation is known) and before the idempotency keys. */
export function requestDeadline(deadlineMs: number): RequestHandler {
  return (req, res, next) => {
    if (!(deadlineMs > 0) || DEADLINE_EXEMPT.has(operationIdOf(req) ?? '')) return next();
    const deadline = new Deadline();
    const expire = async () => {
      if (res.headersSent) return; // already answering: a stream ends by itself
      deadline.expire();
      await Promise.race([deadline.settled(), delay(SETTLE_BOUND_MS)]);
      await delay(OWN_ANSWER_GRACE_MS);
      if (res.headersSent) return;
      deadline.answered();
      res.locals.deadlineAnswered = true;
      req.log.error({ deadline_ms: deadlineMs }, 'request deadline passed: its statements were cancelled and its transactions rolled back');
      sendError(
        res,
        serviceUnavailable(`The request did not finish within its deadline of ${deadlineMs} ms and was stopped; what it had begun was rolled back. Send it again in a few seconds.`),
      );
    };
    const timer = setTimeout(() => void expire(), deadlineMs);
    res.once('close', () => clearTimeout(timer));
    withinDeadline(deadline, next);
  };
}

/** What the handler of a request answered by its deadline fails with afterwards (a refused statement) is already answered. */
export const afterDeadline: ErrorRequestHandler = (error, _req, res, next) => {
  if (res.locals.deadlineAnswered && res.headersSent) return;
  next(error);
};
