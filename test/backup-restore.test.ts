/**
 * The backup and restore drill of docs/operations.md ("Backup and restore"), run as the runbook says: a
 * server (`src/server.ts` as a process) on a new PostgreSQL database is filled through the API (a user, an
 * entity, contacts with their consent, an SMS credential whose auth token is sealed under SECRETS_KEY, and
 * an idempotent request whose stored answer is sealed too); `pg_dump --format=custom` dumps it while it
 * runs; `pg_restore` restores the dump into another new database; a second server, with the same
 * SECRETS_KEY, serves the restored one and reads everything back: the login and the user, the entity, the
 * contacts, the credential, the Idempotency-Key replayed with the same answer (opened from its seal), and a
 * campaign sent through the SMS provider simulator with the restored credential (its sealed token opened,
 * or the simulator answers 401). Always on PostgreSQL (TEST_DATABASE_URL's server, or the local one):
 * the pg_dump and pg_restore on PATH (/usr/bin) must be able to read that server (same major version or
 * newer). Part of `npm run test:postgres` only (vitest.config.ts leaves it out of the SQLite run).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { TEST_SECRETS_KEY } from './helpers/app.js';
import { createPostgresDatabase, type TestDatabase } from './helpers/database.js';
import { request } from './helpers/http.js';
import { startInstance, type Instance } from './helpers/instances.js';
import { waitFor } from './helpers/process.js';

const run = promisify(execFile);
const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN = { username: 'admin.backup', password: 'uma-senha-longa-para-o-backup' };
const SMS_ACCOUNT = `AC${'0b1a2c3d4e5f60718293a4b5c6d7e8f9'}`;
const SMS_AUTH_TOKEN = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const IDEMPOTENCY_KEY = `backup-drill-${randomBytes(4).toString('hex')}`;

const provider = new SmsProviderSimulator();
const databases: TestDatabase[] = [];
const instances: Instance[] = [];
let folder: string;

function start(name: string, database: TestDatabase): Promise<Instance> {
  return startInstance(name, {
    databaseUrl: database.url,
    // The same SECRETS_KEY for both servers (startInstance's default), as the runbook requires.
    env: { SECRETS_KEY: TEST_SECRETS_KEY, ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, SMS_PROVIDER_URL: provider.url, RATE_LIMIT_WRITE: '1000/60' },
  }).then((instance) => {
    instances.push(instance);
    return instance;
  });
}

async function stop(instance: Instance): Promise<void> {
  if (!instance.exited()) instance.child.kill('SIGTERM');
  await instance.exit;
}

async function rows<T>(database: TestDatabase, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as T[];
  } finally {
    await client.end();
  }
}

async function login(instance: Instance, credentials: { username: string; password: string }): Promise<Record<string, string>> {
  const answer = await request(instance.baseUrl, 'POST', '/api/auth/login', {}, credentials);
  expect(answer.status, `${answer.text}\n${instance.output()}`).toBe(200);
  return { Authorization: `Token ${answer.body.data.token as string}` };
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(SMS_ACCOUNT, SMS_AUTH_TOKEN);
  folder = await mkdtemp(join(tmpdir(), 'palanque-backup-'));
});

afterAll(async () => {
  await Promise.all(instances.map(stop));
  await Promise.all(databases.map((database) => database.drop()));
  await provider.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('backup and restore drill (pg_dump, pg_restore, the same SECRETS_KEY)', () => {
  it('restores users, entities, contacts, sealed SMS credentials and sealed idempotent answers, and sends with the restored credential', async () => {
    // 1. A server on a new database, filled through the API.
    const source = await createPostgresDatabase(POSTGRES_SERVER);
    databases.push(source);
    const original = await start('original', source);
    const admin = await login(original, ADMIN);

    const member = { username: 'ana.backup', email: 'ana.backup@exemplo.com.br', password: 'a-senha-da-ana-no-backup' };
    const user = await request(original.baseUrl, 'POST', '/api/auth/account', admin, { ...member, first_name: 'Ana' });
    expect(user.status, user.text).toBe(201);
    const entity = await request(original.baseUrl, 'POST', '/api/entidade/add/', admin, { nome: 'Maria do Backup' });
    expect(entity.status, entity.text).toBe(201);
    const entityId = entity.body.data.id as number;
    // Sending is under test here, not the electoral rules: the platform admin relaxes the entity to warn.
    const relaxed = await request(original.baseUrl, 'PUT', `/api/sms/compliance/?entity_id=${entityId}`, admin, { mode: 'warn', window: null });
    expect(relaxed.status, relaxed.text).toBe(200);
    const phones = ['+5521987650301', '+5521987650302'];
    for (const [i, phone] of phones.entries()) {
      const contact = await request(original.baseUrl, 'POST', '/api/contacts/', admin, {
        entity_id: entityId,
        phone,
        name: `Contato ${i + 1}`,
        consent: { source: 'Ficha de voluntários', given_at: '2026-08-20T19:30:00-03:00', text: 'Aceito receber mensagens.' },
        tags: ['voluntarios'],
      });
      expect(contact.status, contact.text).toBe(201);
    }
    // The credential, created with an Idempotency-Key: its auth token and the stored answer are both sealed.
    const credentialBody = { name: 'Campanha', account_id: SMS_ACCOUNT, sender_id: '11940028922', secret: SMS_AUTH_TOKEN, entity_id: entityId };
    const idempotent = { ...admin, 'Idempotency-Key': IDEMPOTENCY_KEY };
    const credential = await request(original.baseUrl, 'POST', '/api/sms/add_credential/', idempotent, credentialBody);
    expect(credential.status, credential.text).toBe(201);
    const credentialId = credential.body.data.id as number;

    // What the dump will carry is sealed, not clear: the token and the answer are not in it as text.
    const [sealedCredential] = await rows<{ secret_sealed: string }>(source, 'SELECT secret_sealed FROM sms_credentials WHERE id = $1', [credentialId]);
    expect(sealedCredential!.secret_sealed).toMatch(/^v1\./);
    expect(sealedCredential!.secret_sealed).not.toContain(SMS_AUTH_TOKEN);
    const [sealedAnswer] = await rows<{ body: string }>(source, 'SELECT body FROM idempotency_keys WHERE key = $1', [IDEMPOTENCY_KEY]);
    expect(sealedAnswer!.body).toMatch(/^v1\./);

    // 2. The backup, taken while the server runs (pg_dump reads one consistent snapshot).
    const dump = join(folder, 'palanque.dump');
    await run('pg_dump', ['--format=custom', '--no-owner', '--file', dump, '--dbname', source.url]);
    expect((await stat(dump)).size).toBeGreaterThan(0);
    await stop(original);

    // 3. The restore, into a new empty database.
    const restored = await createPostgresDatabase(POSTGRES_SERVER);
    databases.push(restored);
    await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--dbname', restored.url, dump]);

    // 4. A server on the restored database, with the same SECRETS_KEY, reads everything back.
    const again = await start('restored', restored);
    const output = () => again.output();
    expect(again.output(), 'the restored schema needs no migration').not.toMatch(/"event":"migrated"/);
    const adminAgain = await login(again, ADMIN);
    await login(again, { username: member.username, password: member.password });

    const userAgain = await request(again.baseUrl, 'GET', `/api/usuario/${user.body.data.id as number}/`, adminAgain);
    expect(userAgain.status, userAgain.text).toBe(200);
    expect(userAgain.body.data).toMatchObject({ username: member.username, email: member.email, first_name: 'Ana' });

    const entityAgain = await request(again.baseUrl, 'GET', `/api/entidade/data/?id=${entityId}`, adminAgain);
    expect(entityAgain.status, entityAgain.text).toBe(200);
    expect(entityAgain.body.data).toMatchObject({ id: entityId, nome: 'Maria do Backup' });

    const contacts = await request(again.baseUrl, 'GET', `/api/contacts/?entity_id=${entityId}`, adminAgain);
    expect(contacts.status, contacts.text).toBe(200);
    expect((contacts.body.data.results as Array<{ phone: string; consent: { source: string } }>).map((contact) => [contact.phone, contact.consent.source])).toEqual(
      phones.map((phone) => [phone, 'Ficha de voluntários']),
    );

    const credentials = await request(again.baseUrl, 'GET', '/api/sms/list_credentials/', adminAgain);
    expect(credentials.status, credentials.text).toBe(200);
    expect(JSON.stringify(credentials.body.data)).toContain(SMS_ACCOUNT);
    expect(credentials.text).not.toContain(SMS_AUTH_TOKEN);

    // The sealed answer, opened with the same key: the same key and body are replayed, not run again.
    const replayed = await request(again.baseUrl, 'POST', '/api/sms/add_credential/', { ...adminAgain, 'Idempotency-Key': IDEMPOTENCY_KEY }, credentialBody);
    expect(replayed.status, replayed.text).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(credential.text);
    expect(await rows(restored, 'SELECT id FROM sms_credentials')).toHaveLength(1);

    // The sealed auth token, opened with the same key: a campaign to the restored contacts reaches the provider.
    const text = `Depois do restore ${randomBytes(3).toString('hex')}`;
    const campaign = await request(again.baseUrl, 'POST', '/api/sms/list_credentials/', adminAgain, {
      titulo: 'Restaurada',
      credencial: credentialId,
      mensagem: { recipient_list_str: phones.join('\n'), mensagem: text },
    });
    expect(campaign.status, campaign.text).toBe(201);
    const received = await waitFor(
      () => {
        const sent = provider.messages.filter((message) => message.body === text);
        return sent.length === phones.length ? sent : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 200, what: 'the campaign sent with the restored credential to reach the provider', output },
    );
    expect(received.map((message) => message.to).sort()).toEqual([...phones].sort());
  }, 300_000);
});
