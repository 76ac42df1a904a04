/**
 * Several middlewares run one after another as a single Express layer.
 *
 * Every request crosses a dozen small middlewares before its handler (timing, request id, security
 * headers, rate limits, logging, the path guard, ...). Express's router pays its bookkeeping for each
 * layer (matching, parameter processing, prefix trimming), which the municipality list's fast path and
 * the read lane noticed: see docs/benchmarks.md, issue 20's eighth step. Mounted as one layer, they cost
 * a loop. Errors behave as under the router: a thrown error, a rejected promise or `next(error)` goes to
 * the error handlers, and the rest of the sequence is skipped.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function inSequence(handlers: ReadonlyArray<RequestHandler | undefined>): RequestHandler {
  const steps = handlers.filter((handler): handler is RequestHandler => handler !== undefined);
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = steps[index++];
      if (!handler) return next();
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.catch((rejection: unknown) => next(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
