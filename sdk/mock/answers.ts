/**
 * What the mock answers, as the server does: the envelope of a success (`{ success, data, message,
 * request_id }`), and the error model's statuses with their codes (src/http/errors.ts), each naming the
 * field, rule and value at fault.
 */
import { errorResponse, type ErrorDetail } from '../msw-validation.js';

export function envelope(status: number, data: unknown, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ success: true, data, message, request_id: crypto.randomUUID() }), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

export const notFound = (message: string, details: ErrorDetail[]) => errorResponse(404, 'not_found', message, details);
export const conflict = (message: string, details: ErrorDetail[], code = 'conflict') => errorResponse(409, code, message, details);
export const forbidden = (message: string) => errorResponse(403, 'forbidden', message);
export const invalidBody = (details: ErrorDetail[], message = 'The request body is invalid.') => errorResponse(422, 'validation_failed', message, details);
