/**
 * A detail of the contract's error model (spec/components: `ErrorDetail`): where the problem is, which
 * field, which rule, what to do, and the value when echoing it helps. The rules of this package build
 * them; the server and the stateful mock answer them as they are. Written here rather than imported from
 * the SDK's generated types, so that this package depends on nothing of the server or the SDK;
 * test/rules-package.test.ts holds it to the contract's type.
 */
export interface ErrorDetail {
  location?: 'body' | 'query' | 'path' | 'header';
  field: string;
  rule: string;
  message: string;
  value?: unknown;
}
