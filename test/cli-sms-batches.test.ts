/**
 * `palanque sms send --to-file ... --batch-size n` under interruption and failure (issue 41), as an admin
 * runs it: the built CLI as a child process, against a test server that sends through the SMS provider
 * simulator, behind a small proxy of the test's own that slows the campaign sends down (so Ctrl-C lands
 * between batches), fails one on request, or loses one's answer after the server created it. Covered:
 * the whole list is checked by the preview before the first batch (a bad entry sends nothing); Ctrl-C
 * stops between batches, prints what went out and how to resume, exit 130; `--resume` sends the rest
 * and every number gets exactly one message; a failing later batch prints what went out before the
 * error; a lost answer is retried under the same Idempotency-Key and sends nothing twice; a resend
 * without --resume is a new run. Runs on SQLite.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchIdempotencyKey, journalKeyOf } from '../cli/send-journal.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, shown, type BuiltCli, type CliResult } from './helpers/cli.js';
import { request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { recipientSource } from './helpers/sms.js';

const ACCOUNT = `AC${'c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6'}`;
const TOKEN = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const SEND_PATH = '/api/sms/list_credentials/';

let built: BuiltCli;
let app: TestApp;
let admin: TestUser;
let credentialId: number;
const provider = new SmsProviderSimulator();
const numbers = recipientSource('+5521985');

/** What the proxy does to the campaign sends (POST SEND_PATH), in order; and what it saw. */
let sendDelayMs = 0;
let failSends: number[] = [];
let loseAnswers: number[] = [];
let sends: Array<{ key: string | undefined; recipients: string; answered: number }> = [];
let proxy: Server;
let proxyUrl = '';

function bodyOf(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

beforeAll(async () => {
  built = await buildCli();
  await provider.start();
  provider.addAccount(ACCOUNT, TOKEN);
  app = await startTestApp({ withJobs: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Lotes', account_id: ACCOUNT, sender_id: '+5511940035555', secret: TOKEN });
  expect(added.status, added.text).toBe(201);
  credentialId = (added.body as { data: { id: number } }).data.id;

  proxy = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const isSend = req.method === 'POST' && req.url === SEND_PATH;
      const number = isSend ? sends.length + 1 : 0;
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
      if (isSend) {
        const recipients = (JSON.parse(body.toString('utf8')) as { mensagem: { recipient_list_str: string } }).mensagem.recipient_list_str;
        sends.push({ key: headers['idempotency-key'], recipients, answered: 0 });
        if (sendDelayMs) await new Promise((resolve) => setTimeout(resolve, sendDelayMs));
        if (failSends.includes(number)) {
          const refusal = { success: false, error: { code: 'forbidden', message: 'The proxy refuses this batch.', details: [] }, request_id: `proxy-${number}` };
          res.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify(refusal));
          return;
        }
      }
      const answer = await fetch(app.baseUrl + req.url, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(body) });
      const text = await answer.text();
      if (isSend && loseAnswers.includes(number)) {
        req.socket.destroy(); // the server created the campaign; its answer never arrives
        return;
      }
      if (isSend) sends[number - 1]!.answered = answer.status;
      res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 240_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await app?.close();
  await provider.stop();
  await built?.remove();
});

const env = () => ({ PALANQUE_BASE_URL: proxyUrl, PALANQUE_TOKEN: admin.key, PALANQUE_NO_PROGRESS: '1' });

/** A file of `count` fresh numbers (written as people write them), and its numbers in E.164. */
async function recipientsFile(name: string, count: number): Promise<{ path: string; e164: string[] }> {
  const e164 = numbers(count);
  const path = join(built.work, name);
  await writeFile(path, e164.map((number) => `(${number.slice(3, 5)}) ${number.slice(5, 10)}-${number.slice(10)}`).join('\n') + '\n');
  return { path, e164 };
}

const sendArgs = (file: string, text: string, batchSize = 10) => ['sms', 'send', '--credential', String(credentialId), '--title', 'Lotes', '--message', text, '--to-file', file, '--batch-size', String(batchSize)];

/** Runs the CLI, sending SIGINT once its stdout shows the first campaign created. */
function runInterrupted(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [built.bin, ...args], {
      cwd: built.work,
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PALANQUE_'))), PALANQUE_CONFIG: join(built.work, 'config', 'palanque.json'), NO_COLOR: '1', ...env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!interrupted && /Campaign \d+ created/.test(stdout)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits until the provider got a message for every number, then checks that each got exactly one with this text. */
async function expectEachOnce(e164: string[], text: string): Promise<void> {
  const mine = () => provider.messages.filter((message) => message.body.startsWith(text));
  await waitFor(async () => (new Set(mine().map((message) => message.to)).size >= e164.length ? true : undefined), { timeoutMs: 60_000, what: `the ${e164.length} messages "${text}" at the provider` });
  await new Promise((resolve) => setTimeout(resolve, 500)); // a doubled send would arrive meanwhile
  const counts = new Map<string, number>();
  for (const message of mine()) counts.set(message.to, (counts.get(message.to) ?? 0) + 1);
  expect([...counts.keys()].sort()).toEqual([...e164].sort());
  expect([...counts.values()].every((count) => count === 1), JSON.stringify([...counts].filter(([, count]) => count > 1))).toBe(true);
}

const campaignLines = (output: string) => [...output.matchAll(/^Campaign (\d+) created \(batch (\d+)\/(\d+)\)/gm)].map((match) => ({ id: Number(match[1]), batch: Number(match[2]), of: Number(match[3]) }));

describe('a batched send', () => {
  it('stops on Ctrl-C between batches, says what went out and how to resume (exit 130); --resume sends the rest, each number once', { timeout: 180_000 }, async () => {
    const { path, e164 } = await recipientsFile('interrupted.txt', 60);
    const text = `Interrompido ${Date.now()}`;
    sends = [];
    sendDelayMs = 400;
    const stopped = await runInterrupted(sendArgs(path, text));
    sendDelayMs = 0;
    expect(stopped.code, shown(stopped)).toBe(130);
    const first = campaignLines(stopped.stdout);
    // The batch in flight when Ctrl-C came went out too; then it stopped.
    expect(first.length).toBeGreaterThanOrEqual(1);
    expect(first.length).toBeLessThan(6);
    expect(first.map((line) => line.batch)).toEqual(first.map((_, index) => index + 1));
    expect(stopped.stderr).toContain(`Interrupted: ${first.length} of 6 batches went out`);
    expect(stopped.stderr).toContain(`campaigns ${first.map((line) => line.id).join(', ')}`);
    expect(stopped.stderr).toMatch(/To send the rest: palanque sms send .*--to-file \S*interrupted\.txt .*--resume/);
    expect(stopped.stderr).toContain(`Stopped by Ctrl-C before batch ${first.length + 1} of 6.`);
    expect(sends).toHaveLength(first.length);

    const resumed = await built.run([...sendArgs(path, text), '--resume'], { env: env() });
    expect(resumed.code, shown(resumed)).toBe(0);
    expect(resumed.stderr).toContain(`Resuming: ${first.length} of 6 batches went out before`);
    const rest = campaignLines(resumed.stdout);
    expect(rest.map((line) => line.batch)).toEqual([1, 2, 3, 4, 5, 6].slice(first.length));
    // The table and total of this run's campaigns.
    expect(resumed.stdout).toMatch(new RegExp(`^${6 - first.length} campaigns: ${(6 - first.length) * 10} accepted, 0 rejected, 0 opted out$`, 'm'));
    await expectEachOnce(e164, text);

    // Finished: nothing left to resume.
    const again = await built.run([...sendArgs(path, text), '--resume'], { env: env() });
    expect(again.code, shown(again)).toBe(2);
    expect(again.stderr).toContain('every batch of that send went out already');
  });

  it('on a failing later batch, prints what went out before the error; --resume sends the failed batch under the same key', { timeout: 180_000 }, async () => {
    const { path, e164 } = await recipientsFile('failing.txt', 40);
    const text = `Falha ${Date.now()}`;
    sends = [];
    failSends = [3];
    const failed = await built.run(sendArgs(path, text), { env: env() });
    failSends = [];
    expect(failed.code, shown(failed)).toBe(3);
    const sent = campaignLines(failed.stdout);
    expect(sent.map((line) => line.batch)).toEqual([1, 2]);
    expect(failed.stderr).toContain(`Batch 3 of 4 failed: 2 of 4 batches went out (20 messages accepted; campaigns ${sent.map((line) => line.id).join(', ')})`);
    expect(failed.stderr).toContain('--resume');
    expect(failed.stderr).toContain('Error 403 forbidden: The proxy refuses this batch.');
    const refusedKey = sends[2]!.key;

    const resumed = await built.run([...sendArgs(path, text), '--resume'], { env: env() });
    expect(resumed.code, shown(resumed)).toBe(0);
    expect(campaignLines(resumed.stdout).map((line) => line.batch)).toEqual([3, 4]);
    // Batch 3 went again with the key it had: a retry or a resume never doubles a batch.
    expect(sends[3]!.recipients).toBe(sends[2]!.recipients);
    expect(sends[3]!.key).toBe(refusedKey);
    await expectEachOnce(e164, text);
  });

  it('retries a batch whose answer was lost under the same Idempotency-Key, and the server sends it once', { timeout: 180_000 }, async () => {
    const { path, e164 } = await recipientsFile('lost.txt', 30);
    const text = `Perdida ${Date.now()}`;
    sends = [];
    loseAnswers = [2];
    const result = await built.run(sendArgs(path, text), { env: env() });
    loseAnswers = [];
    expect(result.code, shown(result)).toBe(0);
    // Batch 2 twice (its first answer lost after the server created the campaign), same key, one campaign.
    expect(sends.map((send) => send.recipients)).toEqual([sends[0]!.recipients, sends[1]!.recipients, sends[1]!.recipients, sends[3]!.recipients]);
    expect(sends[2]!.key).toBe(sends[1]!.key);
    expect(new Set(sends.map((send) => send.key)).size).toBe(3);
    const ids = campaignLines(result.stdout).map((line) => line.id);
    expect(ids).toHaveLength(3);
    expect(await app.sms.models.Campaign.count({ where: { id: ids } })).toBe(3);
    await expectEachOnce(e164, text);

    // Sent again on purpose, without --resume: a new run, with new keys, that does send again.
    const before = sends.length;
    const resend = await built.run(sendArgs(path, text), { env: env() });
    expect(resend.code, shown(resend)).toBe(0);
    expect(sends.slice(before).map((send) => send.key).filter((key) => sends.slice(0, before).some((earlier) => earlier.key === key))).toEqual([]);
    await waitFor(async () => (provider.messages.filter((message) => message.body.startsWith(text)).length >= 2 * e164.length ? true : undefined), { timeoutMs: 60_000, what: 'the resend at the provider' });
  });

  it('checks the whole list with the preview before the first batch: a bad entry in the last batch sends nothing', { timeout: 120_000 }, async () => {
    const { path } = await recipientsFile('bad.txt', 25);
    await writeFile(path, (await readFile(path, 'utf8')) + '(21) 1234\n');
    const text = `Ruim ${Date.now()}`;
    sends = [];
    const result = await built.run(sendArgs(path, text), { env: env() });
    expect(result.code, shown(result)).toBe(3);
    expect(result.stderr).toContain('Nothing was sent');
    expect(result.stderr).toContain('(21) 1234');
    expect(sends).toEqual([]);
    expect(provider.messages.filter((message) => message.body.startsWith(text))).toEqual([]);
  });
});

describe('the journal and the keys', () => {
  it('keeps the journal beside the configuration, keyed by the list, the text and the credential', async () => {
    const files = await readdir(join(built.work, 'config', 'sms-sends'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((file) => /^[0-9a-f]{32}\.json$/.test(file))).toBe(true);
    const journal = JSON.parse(await readFile(join(built.work, 'config', 'sms-sends', files[0]!), 'utf8')) as { sent: Array<{ idempotency_key: string }> };
    expect(journal.sent.every((sent) => sent.idempotency_key.startsWith('sms-batch-'))).toBe(true);
  });

  it('derives a stable key per run, text, credential and recipients', () => {
    const key = batchIdempotencyKey('run-1', 'Olá', 3, '+5521999990001\n+5521999990002');
    expect(key).toBe(batchIdempotencyKey('run-1', 'Olá', 3, '+5521999990001\n+5521999990002'));
    expect(key).toMatch(/^sms-batch-[0-9a-f]{48}$/);
    for (const other of [
      batchIdempotencyKey('run-2', 'Olá', 3, '+5521999990001\n+5521999990002'),
      batchIdempotencyKey('run-1', 'Oi', 3, '+5521999990001\n+5521999990002'),
      batchIdempotencyKey('run-1', 'Olá', 4, '+5521999990001\n+5521999990002'),
      batchIdempotencyKey('run-1', 'Olá', 3, '+5521999990001'),
    ]) expect(other).not.toBe(key);
    expect(journalKeyOf({ recipients: 'a\nb', text: 'Olá', credential: 3 })).toBe(journalKeyOf({ recipients: 'a\nb', text: 'Olá', credential: 3 }));
    expect(journalKeyOf({ recipients: 'a\nb', text: 'Olá', credential: 3 })).not.toBe(journalKeyOf({ recipients: 'a\nb\n', text: 'Olá', credential: 3 }));
  });
});
