/**
 * A front-end-style component test on the msw handlers of sdk/msw.ts: small framework-free components
 * render into a minimal fake DOM node, calling the API through the SDK, and msw/node answers with the
 * spec's examples. Each test may change an answer with `server.use(...)`; `afterEach` resets it.
 */
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, login, PalanqueApiError, unwrap, type PalanqueClient } from '../sdk/index.js';
import { DEFAULT_BASE_URL, handlers, mockUrl, override } from '../sdk/msw.js';
import { responseExample } from './helpers/spec.js';

// --- the "front end" ------------------------------------------------------------------------------

/** The part of a DOM element the components use, keeping every render to check intermediate states. */
class FakeElement {
  readonly renders: string[] = [];
  get innerHTML(): string {
    return this.renders.at(-1) ?? '';
  }
  set innerHTML(html: string) {
    this.renders.push(html);
  }
  /** The text a user sees: the markup without tags, entities decoded, spaces collapsed. */
  get textContent(): string {
    return this.innerHTML
      .replace(/<[^>]*>/g, ' ')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ')
      .trim();
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);
}

/** What a failed call shows: the API's message and the request id to quote to support. */
function errorMessage(error: unknown): string {
  if (error instanceof PalanqueApiError) {
    return `<p role="alert">${escapeHtml(error.message)} <small>(${escapeHtml(error.code)}; pedido ${escapeHtml(error.requestId)})</small></p>`;
  }
  return `<p role="alert">Sem conexão com o servidor.</p>`;
}

/** A municipality picker: a select of the first page of municipalities (of one state, if given). */
async function MunicipalityPicker(root: FakeElement, api: PalanqueClient, props: { uf?: number } = {}): Promise<void> {
  root.innerHTML = '<p aria-busy="true">Carregando municípios…</p>';
  try {
    const { data: page } = await api.GET('/api/municipios/', { params: { query: props.uf === undefined ? {} : { codigo_uf: props.uf } } });
    if (!page || page.results.length === 0) {
      root.innerHTML = '<p>Nenhum município encontrado.</p>';
      return;
    }
    const options = page.results.map((municipality) => `<option value="${municipality.codigo_ibge}">${escapeHtml(municipality.nome)}</option>`);
    root.innerHTML = `<label>Município <select name="municipio">${options.join('')}</select></label><small>${page.results.length} de ${page.count} municípios</small>`;
  } catch (error) {
    root.innerHTML = errorMessage(error);
  }
}

/** The signed-in home: logs in, then lists the candidates of the user's teams. */
async function CandidateList(root: FakeElement, api: PalanqueClient, credentials: { username: string; password: string }): Promise<void> {
  root.innerHTML = '<p aria-busy="true">Entrando…</p>';
  try {
    const session = await login(api, credentials.username, credentials.password);
    const page = unwrap(await api.GET('/api/entidade/', { params: { query: { tp: 'candidato' } } }));
    const items = page.results.map((entity) => `<li data-id="${entity.id}">${escapeHtml(entity.nm_urna ?? entity.nome)} <small>${escapeHtml(entity.tp)}</small></li>`);
    root.innerHTML = `<h1>Olá, ${escapeHtml(session.user.first_name || session.user.username)}</h1><ul>${items.join('')}</ul>`;
  } catch (error) {
    root.innerHTML = errorMessage(error);
  }
}

// --- the tests ------------------------------------------------------------------------------------

const server = setupServer(...handlers);
let api: PalanqueClient;
let root: FakeElement;

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  server.events.removeAllListeners();
});
afterAll(() => server.close());

beforeEach(() => {
  root = new FakeElement();
  // `retry: false`: the error state is shown at once, instead of after the SDK's retries of a 503.
  api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
});

describe('MunicipalityPicker', () => {
  it('shows loading, then the spec\'s example page', async () => {
    await MunicipalityPicker(root, api);
    expect(root.renders[0]).toContain('Carregando municípios');
    const example = responseExample('/api/municipios/', 'get', '200', 'firstPage') as { count: number; results: { codigo_ibge: number; nome: string }[] };
    expect(root.innerHTML.match(/<option /g)).toHaveLength(example.results.length);
    expect(root.innerHTML).toContain(`<option value="1100015">Alta Floresta D&#39;Oeste</option>`);
    expect(root.textContent).toContain(`${example.results.length} de ${example.count} municípios`);
  });

  it('shows the API\'s message and the request id when the list is unavailable (503, this test only)', async () => {
    server.use(override('listMunicipalities', 503));
    await MunicipalityPicker(root, api);
    const example = responseExample('/api/municipios/', 'get', '503', 'referenceDataUnavailable') as { error: { message: string }; request_id: string };
    expect(root.innerHTML).toMatch(/^<p role="alert">/);
    expect(root.textContent).toBe(`${example.error.message} (reference_data_unavailable; pedido ${example.request_id})`);
  });

  it('is back to the examples in the next test: the override was reset', async () => {
    expect(server.listHandlers()).toHaveLength(handlers.length);
    await MunicipalityPicker(root, api);
    expect(root.innerHTML).toContain('<select name="municipio">');
  });

  it('sends the state filter, and shows an empty list (a hand-written handler on a typed path)', async () => {
    const seen: URL[] = [];
    server.use(
      http.get(mockUrl('/api/municipios/'), ({ request }) => {
        seen.push(new URL(request.url));
        return HttpResponse.json({ links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] });
      }),
    );
    await MunicipalityPicker(root, api, { uf: 35 });
    expect(seen.map((url) => url.searchParams.get('codigo_uf'))).toEqual(['35']);
    expect(root.textContent).toBe('Nenhum município encontrado.');
  });
});

describe('CandidateList', () => {
  it('logs in with the example session, sends its key, and lists the example entities', async () => {
    const authorizations: (string | null)[] = [];
    server.events.on('request:start', ({ request }) => {
      if (new URL(request.url).pathname === '/api/entidade/') authorizations.push(request.headers.get('Authorization'));
    });
    await CandidateList(root, api, { username: 'ana.souza', password: 'correct horse battery' });

    const session = (responseExample('/api/auth/login', 'post', '200', 'admin') as { data: { token: string } }).data;
    expect(authorizations).toEqual([`Token ${session.token}`]);
    expect(root.textContent).toMatch(/^Olá, Ana /);
    expect(root.innerHTML).toContain('<li data-id="12">Maria Santos <small>candidato</small></li>');
  });

  it('shows the contract\'s wrong-credentials error (another named example of the 401, this test only)', async () => {
    server.use(override('login', 401, { example: 'invalidCredentials' }));
    await CandidateList(root, api, { username: 'ana.souza', password: 'wrong password' });
    const example = responseExample('/api/auth/login', 'post', '401', 'invalidCredentials') as { error: { code: string; message: string }; request_id: string };
    expect(root.textContent).toBe(`${example.error.message} (${example.error.code}; pedido ${example.request_id})`);
    expect(api.token).toBeUndefined();
  });
});
