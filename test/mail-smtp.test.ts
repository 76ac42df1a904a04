/**
 * Mail over real SMTP: with an smtpUrl, createMailer (src/mail/mailer.ts) delivers through nodemailer to
 * an SMTP server (here smtp-server on loopback, no TLS) with the right envelope and headers, and a whole
 * password reset works when its two mails travel that way. A refused delivery is logged, not answered.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMailer, type Mailer } from '../src/mail/mailer.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/accounts.js';
import { waitFor } from './helpers/process.js';

interface Received {
  mailFrom: string | undefined;
  rcptTo: string[];
  raw: Buffer;
}

const FROM = 'Palanque <no-reply@palanque.app>';
const received: Received[] = [];
/** While set, the server refuses every recipient (a mailbox that does not exist, a server in trouble). */
let refuseRecipients = false;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onRcptTo(_address, _session, callback) {
    callback(refuseRecipients ? Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }) : undefined);
  },
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      received.push({
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
        rcptTo: session.envelope.rcptTo.map((address) => address.address),
        raw: Buffer.concat(chunks),
      });
      callback();
    });
  },
});
let port = 0;

const mailLogs: Array<Record<string, unknown>> = [];
const mailLogger = pino({ level: 'debug' }, new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) mailLogs.push(JSON.parse(line));
    done();
  },
}));
let mailer: Mailer;

beforeAll(async () => {
  await new Promise<void>((resolve, reject) => {
    smtp.once('error', reject);
    smtp.listen(0, '127.0.0.1', () => resolve());
  });
  port = (smtp.server.address() as AddressInfo).port;
  mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM, directory: 'unused' }, mailLogger);
});
afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const apps: TestApp[] = [];
beforeEach(() => {
  received.length = 0;
  mailLogs.length = 0;
  refuseRecipients = false;
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function waitForMessages(count: number): Promise<Received[]> {
  return waitFor(() => (received.length >= count ? received.slice() : undefined), {
    timeoutMs: 10_000,
    what: `${count} message(s) at the SMTP server`,
    output: () => JSON.stringify(mailLogs, null, 1),
  });
}

const recipients = (email: Awaited<ReturnType<typeof PostalMime.parse>>) => (email.to ?? []).map((address) => address.address);

describe('createMailer with an smtpUrl', () => {
  it('delivers a message to the SMTP server with the envelope, headers and text it was given', async () => {
    await mailer.send({ to: 'joana.lima@exemplo.com.br', subject: 'Olá, Joana — eleições', text: 'Primeira linha com acentuação: votação.\nSegunda linha.\n' });
    // send() resolves once the server accepted the message, so it is already here.
    expect(received).toHaveLength(1);
    const [message] = received;
    expect(message!.mailFrom).toBe('no-reply@palanque.app');
    expect(message!.rcptTo).toEqual(['joana.lima@exemplo.com.br']);
    const email = await PostalMime.parse(message!.raw);
    expect(email.from).toMatchObject({ name: 'Palanque', address: 'no-reply@palanque.app' });
    expect(recipients(email)).toEqual(['joana.lima@exemplo.com.br']);
    expect(email.subject).toBe('Olá, Joana — eleições');
    expect(email.text?.replace(/\r\n/g, '\n')).toBe('Primeira linha com acentuação: votação.\nSegunda linha.\n');
    expect(email.messageId).toMatch(/^<.+@.+>$/);
    expect(mailLogs).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'mail sent', to: 'joana.lima@exemplo.com.br', message_id: email.messageId })]));
  });

  it('rejects when the server refuses the recipient', async () => {
    refuseRecipients = true;
    await expect(mailer.send({ to: 'ninguem@exemplo.com.br', subject: 'x', text: 'x' })).rejects.toThrow();
    expect(received).toHaveLength(0);
  });
});

describe('a password reset over SMTP', () => {
  it('mails the token to the user, and following it mails a new password that logs in', async () => {
    const app = await startTestApp({ mailer });
    apps.push(app);
    const ana = await createUser(app, { first_name: 'Ana' });

    const started = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=${encodeURIComponent(ana.user.email)}`);
    expect(started.status).toBe(200);
    expect((await started.json()).data.status).toBe('reset_requested');

    const [resetMessage] = await waitForMessages(1);
    expect(resetMessage!.rcptTo).toEqual([ana.user.email]);
    expect(resetMessage!.mailFrom).toBe('no-reply@palanque.app');
    const resetMail = await PostalMime.parse(resetMessage!.raw);
    expect(recipients(resetMail)).toEqual([ana.user.email]);
    expect(resetMail.subject).toBe('Palanque: password reset');
    const token = /Reset token: (\S+)/.exec(resetMail.text ?? '')?.[1];
    const link = /(https?:\/\/\S+\/api\/auth\/generate_new_pass\?\S+)/.exec(resetMail.text ?? '')?.[1];
    expect(token, resetMail.text).toBeDefined();
    expect(link, resetMail.text).toBeDefined();
    expect(new URL(link!).searchParams.get('token')).toBe(token);
    // Nothing was written to a folder: the app used the SMTP mailer it was given.
    expect(app.logs.some((line) => line.msg === 'mail written to a file (no SMTP_URL)')).toBe(false);

    const valid = await fetch(`${app.baseUrl}/api/auth/password_reset/validate_token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: ana.user.email, token }),
    });
    expect((await valid.json()).data.valid).toBe(true);

    const completed = await fetch(link!);
    expect(completed.status).toBe(200);
    expect((await completed.json()).data.status).toBe('password_sent');

    const messages = await waitForMessages(2);
    expect(messages).toHaveLength(2);
    expect(messages[1]!.rcptTo).toEqual([ana.user.email]);
    const passwordMail = await PostalMime.parse(messages[1]!.raw);
    expect(recipients(passwordMail)).toEqual([ana.user.email]);
    expect(passwordMail.subject).toBe('Palanque: your new password');
    const password = /Your new password is:\s+(\S+)/.exec(passwordMail.text ?? '')?.[1];
    expect(password, passwordMail.text).toBeDefined();

    const login = (password: string) =>
      fetch(`${app.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: ana.user.username, password }) });
    expect((await login(password!)).status).toBe(200);
    expect((await login(ana.password)).status).toBe(401);
  });

  it('still answers reset_requested when the SMTP server refuses the mail, logs the failure, and a new request goes through', async () => {
    const app = await startTestApp({ mailer });
    apps.push(app);
    const ana = await createUser(app);
    const ask = () => fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=${encodeURIComponent(ana.user.email)}`);

    refuseRecipients = true;
    const refused = await ask();
    expect(refused.status).toBe(200);
    expect((await refused.json()).data.status).toBe('reset_requested');
    const failure = await waitFor(() => app.logs.find((line) => line.msg === 'could not start a password reset'), {
      timeoutMs: 10_000,
      what: 'the failed send to be logged',
      output: () => JSON.stringify(app.logs.slice(-20), null, 1),
    });
    expect(failure).toMatchObject({ user_id: ana.user.id });
    expect(received).toHaveLength(0);

    refuseRecipients = false;
    expect((await ask()).status).toBe(200);
    const [message] = await waitForMessages(1);
    expect(message!.rcptTo).toEqual([ana.user.email]);
    expect((await PostalMime.parse(message!.raw)).subject).toBe('Palanque: password reset');
  });
});
