/**
 * The mock's deprecation headers: the same rule as the server's (@palanque/rules/deprecation, read from
 * the same bundled contract), so a front end tested against the mock hears `Deprecation`, `Sunset` and
 * `Link` where the server would send them: on every answer of a deprecated operation, and on the answer
 * to a request that used a deprecated parameter or body field. The example handlers (msw.ts) and the
 * stateful ones (mock/auth.ts) both pass their answers through `withDeprecation`.
 */
import { contractDeprecations, deprecationHeaders } from '@palanque/rules/deprecation';
import contract from './openapi.json' with { type: 'json' };

const DEPRECATIONS = contractDeprecations(contract as unknown as Record<string, unknown>);

/** The headers the contract's examples must not stand in for: they depend on the request. */
export const DEPRECATION_HEADER_COMPONENTS: ReadonlySet<string> = new Set(['#/components/headers/Deprecation', '#/components/headers/Sunset', '#/components/headers/DeprecationLink']);

/**
 * The answer, with the deprecation headers of this request. `checked` says the request passed the
 * contract's checks: only then is its body read for deprecated fields, as the server reads it only then.
 */
export async function withDeprecation(operationId: string, request: Request, answer: Response, base: string, checked: boolean): Promise<Response> {
  const entry = DEPRECATIONS.get(operationId);
  if (!entry) return answer;
  const url = new URL(request.url);
  const json = checked && entry.fields.length > 0 && /[/+]json\b/.test(request.headers.get('content-type') ?? '');
  const body = json ? await request.clone().json().catch(() => undefined) : undefined;
  const headers = deprecationHeaders(
    entry,
    { hasQuery: (name) => url.searchParams.has(name), hasHeader: (name) => request.headers.has(name), body },
    new URL(base).pathname.replace(/\/$/, ''),
  );
  if (!headers) return answer;
  const merged = new Headers(answer.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: merged });
}
