/**
 * How a schema's violations become the error model's details, shared by the server
 * (src/http/validation.ts) and the msw handlers' request checks (msw-validation.ts), so that both name
 * the same fields for the same body.
 */
import type { components } from './schema.js';

type ErrorDetail = components['schemas']['ErrorDetail'];

/** Rules by which a value fails the branches of a union, rather than a rule of the branch it meant. */
const BRANCH_RULES = new Set(['type', 'oneOf', 'anyOf']);

/**
 * A field declared as "an object or null" (`oneOf: [Object, null]`) that holds an object with a bad
 * field inside fails every branch, and ajv reports each: the bad field (the detail that helps), then
 * that the value is not null and matches no branch. The last two only repeat the first, so a detail of
 * those rules is dropped when another detail names a field inside the same one.
 */
export function withoutBranchNoise<Detail extends Pick<ErrorDetail, 'location' | 'field' | 'rule'>>(details: Detail[]): Detail[] {
  const hasDetailInside = (outer: Detail) =>
    details.some((inner) => inner.location === outer.location && inner.field !== outer.field && inner.field.startsWith(outer.field === '' ? '' : `${outer.field}.`));
  return details.filter((detail) => !(BRANCH_RULES.has(detail.rule) && hasDetailInside(detail)));
}
