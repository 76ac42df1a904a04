/**
 * The deprecation headers (issue 45 §2; the rule and its header values in @palanque/rules/deprecation,
 * shared with the mock). What holds: every answer to an operation the contract deprecates carries
 * `Deprecation` and `Link` (and `Sunset` where the contract sets one), whatever its status, the read lane's
 * included; an answer to a request that used a deprecated query or header parameter, or a deprecated field
 * of its JSON body, carries them too. Nothing is sent for what the contract does not deprecate, and a
 * contract without deprecations costs a request nothing (neither step is mounted).
 *
 * Two steps, because the body is read late: `deprecatedOperations` runs before the fast path and the read
 * lane (which answer GETs without the later middleware), by the route; `deprecatedFields` runs after the
 * contract validator, on the parsed body (a body the validator refuses is answered without them). A handler that sets `Link` itself would replace the links: the
 * one that does (news sources' pages) is not deprecated; a deprecated one would append its own.
 */
import type { Request, RequestHandler, Response } from 'express';
import { contractDeprecations, deprecationHeaders, type OperationDeprecations, type RequestUse } from '@palanque/rules/deprecation';
import { findRoute, type OpenApiDocument, type Route } from './contract.js';
import { operationIdOf } from './operations.js';

/** Built once per contract object (the contract is shared and never changed: contract.ts). */
const built = new WeakMap<object, Map<string, OperationDeprecations>>();

function deprecationsOf(contract: Readonly<OpenApiDocument>): Map<string, OperationDeprecations> {
  let deprecations = built.get(contract);
  if (!deprecations) {
    deprecations = contractDeprecations(contract as Record<string, unknown>);
    built.set(contract, deprecations);
  }
  return deprecations;
}

/** The first step: deprecated operations and parameters, by the route. */
export function deprecatedOperations(contract: Readonly<OpenApiDocument>, routes: Route[], basePath: string): RequestHandler | undefined {
  const deprecations = deprecationsOf(contract);
  const early = [...deprecations.values()].filter((entry) => entry.operation !== undefined || entry.parameters.length > 0);
  if (early.length === 0) return undefined;
  const byId = new Map(early.map((entry) => [entry.operationId, entry]));
  return (req, res, next) => {
    // Before the path guard, which serves HEAD by GET: so does this.
    const operationId = findRoute(routes, req.path)?.operationIds[req.method === 'HEAD' ? 'GET' : req.method];
    const entry = operationId === undefined ? undefined : byId.get(operationId);
    if (entry) setHeaders(res, entry, useOf(req, undefined), basePath);
    next();
  };
}

/** The second step: deprecated fields of the JSON body, once it is parsed and valid. */
export function deprecatedFields(contract: Readonly<OpenApiDocument>, basePath: string): RequestHandler | undefined {
  const withFields = [...deprecationsOf(contract).values()].filter((entry) => entry.fields.length > 0);
  if (withFields.length === 0) return undefined;
  const byId = new Map(withFields.map((entry) => [entry.operationId, entry]));
  return (req, res, next) => {
    const operationId = operationIdOf(req);
    const entry = operationId === undefined ? undefined : byId.get(operationId);
    if (entry && req.is('application/json')) setHeaders(res, entry, useOf(req, req.body), basePath);
    next();
  };
}

function useOf(req: Request, body: unknown): RequestUse {
  const query = req.query as Record<string, unknown>;
  return { hasQuery: (name) => query[name] !== undefined, hasHeader: (name) => req.get(name) !== undefined, body };
}

function setHeaders(res: Response, entry: OperationDeprecations, use: RequestUse, basePath: string): void {
  const headers = deprecationHeaders(entry, use, basePath);
  if (headers) res.set(headers);
}
