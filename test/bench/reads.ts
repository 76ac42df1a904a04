/**
 * The reads `npm run bench:profile` and `npm run bench:ab` load, by name, and the benchmark's data they
 * read: prepared once per directory (PROFILE_DIR, default a temporary one) and reused after.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_PASSWORD, adminQuery, prepareDatabase, type BenchData } from './data.js';
import { root } from './servers.js';

export const reads: Record<string, (data: BenchData, userId: number) => string> = {
  municipalities: () => '/api/municipios/?page=186',
  'login-attempt': () => '/api/check/login_attempt/',
  account: (_data, userId) => `/api/usuario/${userId}/`,
  'entity-list': () => '/api/entidade/',
  'get-entity': (data) => `/api/entidade/data/?id=${data.entityId}`,
  operators: (data) => `/api/operators/get_operators/?id=${data.entityId}`,
  bookmarks: () => '/api/research/get_user_research_bookmarks/',
  'scenario-requests': (data) => `/api/strategy/get_scenario_requests/?monitor_id=${data.monitorIds[0]}`,
  'sms-credentials': () => '/api/sms/list_credentials/',
  'monitor-data': (data) => `/api/monitor_social/data/?id_monitor=${data.monitorIds[0]}`,
  'sms-campaigns': (data) => `/api/sms/campaigns/?entity_id=${data.entityId}`,
  'sms-campaign-report': (data) => `/api/sms/campaigns/${data.campaignId}/`,
  conversations: (data) => `/api/chat/conversations/?entity_id=${data.entityId}`,
  'inbox-changes': (data) => `/api/chat/changes/?entity_id=${data.entityId}&cursor=${data.inboxCursor}`,
  // The court's 100,000 generated candidacies (issue 22), as the bench searches them.
  'candidacy-name': () => '/api/elections/candidacies/?nome=maria%20silva&cd_eleicao=619',
  'candidacy-office': () => '/api/elections/candidacies/?cd_eleicao=619&cd_cargo=13&uf=SP&page=3',
};

/** The reads sent without a key. */
export const keyless = ['municipalities', 'login-attempt'];

export interface PreparedData {
  url: string;
  bench: BenchData;
  password: string;
}

export const dataDirectory = process.env.PROFILE_DIR ?? join(tmpdir(), 'palanque-profile');
export const municipiosSource = process.env.MUNICIPIOS_SOURCE ?? join(root, 'test', 'fixtures', 'municipios-brasileiros', 'municipios.csv');

/**
 * The benchmark's database, prepared once per PROFILE_DIR (its password kept beside it): SQLite, or a
 * database of its own on PROFILE_DATABASE_URL's PostgreSQL server.
 */
export async function preparedData(): Promise<PreparedData> {
  mkdirSync(dataDirectory, { recursive: true });
  const postgres = process.env.PROFILE_DATABASE_URL;
  const saved = join(dataDirectory, postgres ? 'postgres.json' : 'sqlite.json');
  if (existsSync(saved)) return JSON.parse(readFileSync(saved, 'utf8')) as PreparedData;
  let url = `sqlite:${join(dataDirectory, 'bench.sqlite')}`;
  if (postgres) {
    const server = new URL(postgres);
    server.pathname = `/palanque_profile_${randomBytes(4).toString('hex')}`;
    url = server.toString();
    await adminQuery(url, `CREATE DATABASE ${server.pathname.slice(1)}`);
  }
  const bench = await prepareDatabase(url, municipiosSource);
  const prepared = { url, bench, password: BENCH_PASSWORD };
  writeFileSync(saved, JSON.stringify(prepared));
  return prepared;
}

/** Logs in the owner of the team PROFILE_OWNER names (0, 1 or 2: of 1,000, 10,000 or 100,000 entities; default 0). */
export async function logInOwner(baseUrl: string, data: PreparedData): Promise<{ token: string; user: { id: number } }> {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: data.bench.owners[Number(process.env.PROFILE_OWNER ?? 0)], password: data.password }),
  });
  return (await login.json()).data as { token: string; user: { id: number } };
}
