/**
 * One 'finish' listener per request for everything that watches answers end (the request metrics, the
 * log line of an answer given before the request logger), where each used to add a listener of its own:
 * one start time, one closure, and a place to add the next observer. (Its speed-up on the municipality
 * list's fast path was within the noise: docs/benchmarks.md, issue 20's sixth step.)
 */
import type { Request, RequestHandler, Response } from 'express';

/** Called once the response has been handed to the network, with when the request arrived (process.hrtime.bigint()). */
export type CompletionObserver = (req: Request, res: Response, startedAt: bigint) => void;

export function observeCompletion(observers: CompletionObserver[]): RequestHandler {
  return (req, res, next) => {
    const startedAt = process.hrtime.bigint();
    // 'finish' fires at most once, so `on` does what `once` would without its wrapper.
    res.on('finish', () => {
      for (const observe of observers) observe(req, res, startedAt);
    });
    next();
  };
}

/** Milliseconds since `startedAt`, as the log lines' responseTime. */
export function millisecondsSince(startedAt: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6);
}
