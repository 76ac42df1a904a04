/** The operations of a contract, as the hybrid mode lists them: read off the server's own route table. */
import { buildRoutes, type OpenApiDocument } from '../http/contract.js';

export interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
}

export function operationsOf(contract: OpenApiDocument): ContractOperation[] {
  return buildRoutes(contract, '').flatMap((route) => route.methods.map((method) => ({ operationId: route.operationIds[method]!, method, path: route.template })));
}

/** One line each: `  listTrendingHashtags  GET /api/trends/hashtags/`. */
export function describeOperations(operations: ContractOperation[]): string {
  const width = Math.max(...operations.map((operation) => operation.operationId.length));
  return operations.map((operation) => `  ${operation.operationId.padEnd(width)}  ${operation.method} ${operation.path}`).join('\n');
}
