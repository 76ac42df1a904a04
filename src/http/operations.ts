/**
 * Binds each operation of the contract to its handler by operationId. The types come from the SDK's
 * generated schema, so a handler sees the query its operation declares and builds the bodies it declares:
 * server and SDK cannot disagree.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { operations } from '../../sdk/schema.js';
import { notImplemented } from './errors.js';

export type OperationId = keyof operations;

type Parameters<Id extends OperationId> = operations[Id]['parameters'];
type Responses<Id extends OperationId> = operations[Id]['responses'];

/** The query of an operation, after the validator has checked it and coerced its types. */
export type QueryOf<Id extends OperationId> = Parameters<Id> extends { query?: infer Query } ? NonNullable<Query> : never;

/** The JSON body an operation takes, after the validator has checked it. */
export type BodyOf<Id extends OperationId> = operations[Id] extends { requestBody: { content: { 'application/json': infer Body } } }
  ? Body
  : operations[Id] extends { requestBody?: { content: { 'application/json': infer Body } } }
    ? Body | undefined
    : unknown;

/** The path parameters of an operation, after the validator has coerced their types. */
export type PathOf<Id extends OperationId> = Parameters<Id> extends { path: infer Path } ? Path : Record<string, never>;

/** The JSON body an operation answers with a given status. */
export type ResponseBody<Id extends OperationId, Status extends keyof Responses<Id>> =
  Responses<Id>[Status] extends { content: { 'application/json': infer Body } } ? Body : never;

export type OperationRequest<Id extends OperationId> = Omit<Request, 'query' | 'body' | 'params'> & {
  query: QueryOf<Id>;
  body: BodyOf<Id>;
  params: PathOf<Id>;
};

export type OperationHandler<Id extends OperationId> = (req: OperationRequest<Id>, res: Response) => void | Promise<void>;

export type OperationHandlers = { [Id in OperationId]?: OperationHandler<Id> };

interface MatchedOperation {
  openapi?: { schema?: { operationId?: OperationId }; pathParams?: Record<string, string> };
}

/** The operationId the validator matched to the request (undefined before the validator ran, or for no match). */
export function operationIdOf(req: Request): OperationId | undefined {
  return (req as MatchedOperation).openapi?.schema?.operationId;
}

/**
 * Runs the handler of the operation the validator matched. An operation without one goes to
 * `unimplemented` when given (the hybrid mode's mock), and otherwise answers 501.
 */
export function dispatch(handlers: OperationHandlers, unimplemented?: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    const operationId = operationIdOf(req);
    const handler = operationId && (handlers[operationId] as OperationHandler<OperationId> | undefined);
    if (!handler && unimplemented) return unimplemented(req, res, next);
    if (!handler) throw notImplemented(operationId ?? `${req.method} ${req.path}`);
    // Handlers are not mounted on their own paths, so the path parameters come from the contract's match.
    req.params = { ...(req as MatchedOperation).openapi?.pathParams };
    await handler(req as unknown as OperationRequest<OperationId>, res);
  };
}
