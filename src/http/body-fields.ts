/**
 * Checks of body fields that JSON Schema cannot express (a text that is not blank once trimmed), which
 * handlers gather so that one 422 names every offending field, as the validator's own 422 does.
 */
import { ApiError, type ErrorDetail } from './errors.js';

/** A required text, trimmed; a blank one adds a `not_blank` problem. */
export function requiredText(field: string, value: string, problems: ErrorDetail[]): string {
  const trimmed = value.trim();
  if (trimmed === '') problems.push({ location: 'body', field, rule: 'not_blank', message: 'must not be blank' });
  return trimmed;
}

/** An optional text, trimmed; missing, null or blank is null. */
export function optionalText(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

export function invalidBody(problems: ErrorDetail[]): ApiError {
  return new ApiError(422, 'validation_failed', 'The request body is invalid.', problems);
}
