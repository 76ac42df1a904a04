/**
 * The read lane (src/http/read-lane.ts) must be invisible: a GET it takes is answered exactly as the
 * full contract pipeline answers it, and one it cannot prove valid is left to that pipeline. Two apps on
 * the same demo data, both with response validation off as in production, one without fast paths (and
 * so without the lane), receive the same requests: valid ones and mutated ones (the contract fuzzer's),
 * from users, admins, strangers and bad keys.
 */
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GETS_THAT_CHANGE_STATE } from '../src/app.js';
import { seedDemoData } from '../src/demo/seed.js';
import { ContractSchemas } from '../src/http/contract-schemas.js';
import { loadContract } from '../src/http/contract.js';
import { laneOperations } from '../src/http/read-lane.js';
import { sendEnvelope } from '../src/http/envelope.js';
import { appsClosedAfterEach, startTestApp, testAccountSettings, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { loadSpec } from './helpers/spec.js';
import { send, type Answer } from './fuzz/contract-check.js';
import { operationsOf, preview, RequestArbitraries, type Caller, type FuzzRequest } from './fuzz/requests.js';

const REQUESTS_PER_OPERATION = Number(process.env.LANE_RUNS ?? 30);

const spec = loadSpec() as Record<string, unknown>;
const arbitraries = new RequestArbitraries(spec);
const document = loadContract();
const everyGet = Object.fromEntries(
  Object.values(document.paths)
    .map((pathItem) => (pathItem.get as { operationId?: string } | undefined)?.operationId)
    .filter((operationId): operationId is string => operationId !== undefined)
    .map((operationId) => [operationId, () => undefined]),
);
/** What the lane takes from this contract when every GET has a handler (as in the app). */
const inLane = laneOperations({
  document,
  schemas: new ContractSchemas(document),
  handlers: everyGet,
  // As the app excludes them: the GETs that change state, and the provider-signed one.
  excluded: new Set([...GETS_THAT_CHANGE_STATE, 'receiveSmsWebhook']),
});

let lane: TestApp;
let full: TestApp;
const keys: Partial<Record<'admin' | 'user', string>> = {};

beforeAll(async () => {
  // The same public URL, so both apps write the same links.
  const config = { validateResponses: false, publicUrl: 'https://api.palanque.test' };
  lane = await startTestApp({ withMunicipalities: true, config });
  full = await startTestApp({ database: lane.database, withoutFastPaths: true, config });
  const report = await seedDemoData({ ...lane, municipalities: lane.catalog }, { passwordHashCost: testAccountSettings.passwordHashCost, secretsKey: TEST_SECRETS_KEY });
  const userIds = Object.fromEntries(report.entries.filter((entry) => entry.kind === 'user').map((entry) => [entry.name, entry.id!]));
  keys.admin = (await lane.accounts.tokens.issue(userIds['ana.souza']!)).key;
  keys.user = (await lane.accounts.tokens.issue(userIds['carlos.pereira']!)).key;
  await full.catalog.reload();
}, 120_000);

afterAll(async () => {
  await full?.close();
  await lane?.close();
});

function authorizationOf(caller: Caller): string | undefined {
  switch (caller) {
    case 'anonymous':
      return undefined;
    case 'user':
      return `Token ${keys.user}`;
    case 'admin':
      return `Token ${keys.admin}`;
    case 'adminBearer':
      return `bearer ${keys.admin}`;
    case 'bogusKey':
      return 'Token plq_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    case 'malformedHeader':
      return 'Basic dXNlcjpwYXNz';
  }
}

/** Values of the status reads that change from one moment to the next. */
const MOMENTARY = /"(time|uptime_seconds|latency_ms|generated_at)":("[^"]*"|[\d.]+)/g;

/** What a client sees, less what differs between any two answers (the date, a generated request id, the status reads' clocks, an export's time). */
function comparable(answer: Answer) {
  const { date: _date, 'x-request-id': _requestId, ...headers } = answer.headers;
  const timeless = answer.text.replace(MOMENTARY, '"$1":"<now>"');
  if (timeless !== answer.text) delete headers['content-length'];
  return { status: answer.status, headers, body: timeless.replace(/"request_id":"(?:[^"\\]|\\.)*"/, '"request_id":"<request id>"') };
}

describe('which operations take the lane', () => {
  it('takes the everyday reads, and not the GETs that change state or that a provider signs', () => {
    const taken = [...inLane.keys()];
    for (const read of ['checkLoginAttempt', 'getUser', 'listEntities', 'getEntity', 'listOperators', 'listResearchBookmarks', 'listScenarioRequests', 'listSmsCredentials', 'getSocialMonitorData', 'listConversations' /* a boolean */]) {
      expect(taken).toContain(read);
    }
    for (const other of ['manageGuardianship', 'searchnetOAuthCallback', 'receiveSmsWebhook', 'checkEmail' /* an e-mail format */]) expect(taken).not.toContain(other);
  });
});

describe.each(operationsOf(spec).filter((operation) => inLane.has(operation.operationId)).map((operation) => [operation.operationId, operation] as const))(
  '%s',
  (_operationId, operation) => {
    it(`answers ${operation.method} ${operation.template} as the full pipeline does`, async () => {
      const requests: FuzzRequest[] = fc.sample(arbitraries.for(operation), { numRuns: REQUESTS_PER_OPERATION, seed: 20 });
      for (const request of requests) {
        const authorization = authorizationOf(request.caller);
        const viaLane = comparable(await send(lane.baseUrl, request, authorization));
        const viaPipeline = comparable(await send(full.baseUrl, request, authorization));
        expect(viaLane, `${request.method} ${preview(request.target)} as ${request.caller} (${request.mutation}), headers ${preview(request.headers)}`).toEqual(viaPipeline);
      }
    }, 60_000);
  },
);

describe('a GET that names a content type but sends no body', () => {
  it.each(['application/json', 'text/xml', 'text/plain; charset=utf-8', 'multipart/form-data; boundary=x', 'nonsense'])('with Content-Type %j: same answer', async (contentType) => {
    for (const target of ['/api/sms/list_credentials/', '/api/check/login_attempt/', '/api/research/get_user_research_bookmarks/']) {
      const request = { method: 'GET', target, headers: { 'Content-Type': contentType }, caller: 'admin' as const, mutation: 'a content type without a body' };
      const [viaLane, viaPipeline] = [await send(lane.baseUrl, request, authorizationOf('admin')), await send(full.baseUrl, request, authorizationOf('admin'))];
      expect(comparable(viaLane), `${target} with ${contentType}`).toEqual(comparable(viaPipeline));
    }
  });
});

describe('a boolean query parameter', () => {
  it.each(['true', 'false', 'TRUE', 'True', '1', '0', 'yes', ''])('unread_only=%j: same answer', async (value) => {
    // The demo inbox's conversation has one unread message, so `true` and `false` both list it; the other values are refused.
    const [conversation] = await lane.sequelize.query<{ entity_id: number }>('SELECT entity_id FROM conversations', { type: QueryTypes.SELECT });
    const entityId = conversation!.entity_id;
    const target = `/api/chat/conversations/?entity_id=${entityId}&unread_only=${encodeURIComponent(value)}`;
    const request = { method: 'GET', target, headers: {}, caller: 'admin' as const, mutation: 'a boolean' };
    const [viaLane, viaPipeline] = [await send(lane.baseUrl, request, authorizationOf('admin')), await send(full.baseUrl, request, authorizationOf('admin'))];
    expect(comparable(viaLane), target).toEqual(comparable(viaPipeline));
    if (value === 'true' || value === 'false') expect(JSON.parse(viaLane.text).data.count).toBe(1);
  });
});

describe('the lane', () => {
  const start = appsClosedAfterEach();
  /** A checkLoginAttempt whose message says whether express-openapi-validator matched the request (it leaves `expressRoute`). */
  const reporting = {
    checkLoginAttempt: ((req: { openapi?: object }, res: Parameters<typeof sendEnvelope>[0]) => {
      const state = { attempts: 0, limit: 5, locked: false, retry_after_seconds: 0, window_seconds: 900 };
      sendEnvelope(res, 200, state, req.openapi && 'expressRoute' in req.openapi ? 'validator' : 'lane');
    }) as never,
  };
  const through = async (app: TestApp, query = '', body?: string) => {
    const request = { method: 'GET', target: `/api/check/login_attempt/${query}`, headers: {}, body, caller: 'anonymous' as const, mutation: '' };
    const answer = await send(app.baseUrl, request, undefined);
    return answer.status === 200 ? (JSON.parse(answer.text) as { message: string }).message : answer.status;
  };

  it('answers a valid GET itself, and leaves one with an unknown parameter, a repeated one or a body to the validator', async () => {
    const app = await start({ config: { validateResponses: false }, handlers: reporting });
    expect(await through(app)).toBe('lane');
    expect(await through(app, '?unknown=1')).toBe(400);
    expect(await through(app, '?page=1&page=2')).toBe(400);
    expect(await through(app, '', '')).toBe('validator');
  });

  it('is not there with response validation on, nor without fast paths', async () => {
    expect(await through(await start({ config: { validateResponses: true }, handlers: reporting }))).toBe('validator');
    expect(await through(await start({ config: { validateResponses: false }, withoutFastPaths: true, handlers: reporting }))).toBe('validator');
  });
});
