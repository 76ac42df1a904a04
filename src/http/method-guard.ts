/**
 * Answers, before validation, what is about the path rather than the operation: an unknown path is 404,
 * a method the path does not have is 405 with `Allow`, OPTIONS is 200 with `Allow`, and HEAD is served by
 * the GET operation (Node's HTTP server drops the body of a HEAD response, keeping its headers).
 */
import type { RequestHandler } from 'express';
import { methodNotAllowed, notFound } from './errors.js';
import { findRoute, type Route } from './contract.js';

export function methodGuard(routes: Route[]): RequestHandler {
  return (req, res, next) => {
    const route = findRoute(routes, req.path);
    if (!route) {
      next(notFound(`There is no operation at ${req.path}.`));
      return;
    }
    if (req.method === 'OPTIONS') {
      res.set('Allow', route.allow).status(200).end();
      return;
    }
    if (req.method === 'HEAD' && route.methods.includes('GET')) {
      req.method = 'GET';
    }
    if (!route.methods.includes(req.method)) {
      next(methodNotAllowed(req.method, req.path, route.allow));
      return;
    }
    next();
  };
}
