/** The operations of a contract, as the hybrid mode lists them. */
import type { OpenApiDocument } from '../http/contract.js';

export interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

export function operationsOf(contract: OpenApiDocument): ContractOperation[] {
  return Object.entries(contract.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ operationId: String((operation as { operationId?: unknown }).operationId), method: method.toUpperCase(), path })),
  );
}

/** One line each: `  listTrendingHashtags  GET /api/trends/hashtags/`. */
export function describeOperations(operations: ContractOperation[]): string {
  const width = Math.max(...operations.map((operation) => operation.operationId.length));
  return operations.map((operation) => `  ${operation.operationId.padEnd(width)}  ${operation.method} ${operation.path}`).join('\n');
}
