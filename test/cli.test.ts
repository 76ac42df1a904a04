/**
 * The admin CLI (cli/), as an admin runs it: the built binary (`node dist/cli/palanque.js`, built by
 * test/helpers/cli.ts into a folder of this file's own) as a child process, against a live test server,
 * with its configuration file in a temporary folder.
 *
 * Covered: login (password on stdin, the 0600 file, the stored key), whoami, logout; the municipality
 * list, one page (--json its items) and every page; an entity from a file, and one read with --json posted back (--json prints
 * data, --envelope the whole answer); a CSV of contacts imported as it is (a file, standard input; exit 5
 * on rejected lines unless --allow-rejects); operators add, the former name of invitations send; the
 * exit codes of API, network and usage errors (a parameter the server says is missing included) with the
 * error model's message and request id; against a scripted server, a long Retry-After answered at once
 * and each short wait said on stderr, and SMS recipients sent as written; --help with examples; bash
 * completion; --mock and a bulk SMS send against the Prism mock; and that every operation of the spec is
 * a command, generated from the spec, that reaches the server. The database tasks (db migrate, ...) are
 * test/cli-database-tasks.test.ts's: they run on PostgreSQL too, where this file does not.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractOperations, render } from '../cli/generate.js';
import { COMMANDS, type OperationId } from '../cli/operations.js';
import { lockSubjects } from '../src/accounts/login-lock.js';
import { buildProgram } from '../cli/program.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { SHARED_MUNICIPIOS, startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, runProcess, shown, type BuiltCli, type CliResult, type CliRunOptions } from './helpers/cli.js';
import { readMails, recipients } from './helpers/mail.js';
import { startPrismMock, type RunningMock } from './helpers/prism.js';
import { freePort } from './helpers/process.js';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';

const root = fileURLToPath(new URL('..', import.meta.url));

let built: BuiltCli;
let bin: string;
let work: string;
let app: TestApp;
let admin: TestUser;

/** Runs the built CLI; stdin gets `input` (or is closed at once), the environment `env` over a clean one. */
const cli = (args: string[], options?: CliRunOptions) => built.run(args, options);
const run = (command: string, args: string[], cwd: string) => runProcess(command, args, cwd);

beforeAll(async () => {
  built = await buildCli();
  ({ work, bin } = built);
  app = await startTestApp({ withMunicipalities: true });
  admin = await createAdmin(app, { password: 'senha-do-admin-da-cli' });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await built?.remove();
});

describe('a session against a live server', () => {
  it('logs in with the password on stdin and keeps the key in a 0600 file', async () => {
    const result = await cli(['login', '--base-url', app.baseUrl, '-u', admin.user.username, '--password-stdin'], { input: `${admin.password}\n` });
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${app.baseUrl} as ${admin.user.username} (admin)`);
    const file = join(work, 'config', 'palanque.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(work, 'config'))).mode & 0o777).toBe(0o700);
    const config = JSON.parse(await readFile(file, 'utf8'));
    expect(config.defaultProfile).toBe('default');
    expect(config.profiles.default).toMatchObject({ baseUrl: app.baseUrl, username: admin.user.username, userId: admin.user.id });
    expect(config.profiles.default.token).toMatch(/^plq_/);
    expect(await app.accounts.tokens.authenticate(config.profiles.default.token)).toMatchObject({ user: { id: admin.user.id } });
    // The key is never printed.
    expect(result.stdout + result.stderr).not.toContain(config.profiles.default.token);
  });

  it.skipIf(!existsSync('/usr/bin/script'))('asks for the password on a terminal without echoing it', async () => {
    const configFile = join(work, 'typed.json');
    const command = [process.execPath, bin, 'login', '--base-url', app.baseUrl, '-u', admin.user.username].map((word) => `'${word}'`).join(' ');
    const result = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: work, env: { ...process.env, PALANQUE_CONFIG: configFile }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let typed = false;
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        // Type only once the prompt is up, as a person would (the terminal is then in raw mode).
        if (!typed && stdout.includes('Password for')) {
          typed = true;
          child.stdin.write(`${admin.password}\r`);
        }
      });
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr: '' }));
    });
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toContain('*'.repeat(admin.password.length));
    expect(result.stdout).not.toContain(admin.password);
    expect(result.stdout).toContain('Logged in to');
    expect(JSON.parse(await readFile(configFile, 'utf8')).profiles.default.token).toMatch(/^plq_/);
  });

  it('refuses to ask for a password without a terminal (usage error, exit 2)', async () => {
    const result = await cli(['login', '--base-url', app.baseUrl, '-u', admin.user.username, '--profile', 'other']);
    expect(result.code, shown(result)).toBe(2);
    expect(result.stderr).toContain('--password-stdin');
  });

  it('says who is logged in', async () => {
    const table = await cli(['whoami']);
    expect(table.code, shown(table)).toBe(0);
    expect(table.stdout).toContain(admin.user.username);
    expect(table.stdout).toMatch(/is_admin\s*│\s*true/);
    // --json prints the answer's data (the user), as every API command does; --envelope the whole answer.
    const json = await cli(['whoami', '--json']);
    expect(json.code, shown(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: admin.user.id, username: admin.user.username, is_admin: true });
    const envelope = await cli(['whoami', '--envelope']);
    expect(JSON.parse(envelope.stdout)).toMatchObject({ success: true, data: { id: admin.user.id, username: admin.user.username }, request_id: expect.any(String) });
  });

  it('changes the password (palanque password) and lists and revokes the keys of the other devices (palanque sessions)', async () => {
    const bia = await createUser(app, { password: 'a senha antiga da bia' });
    const configFile = join(work, 'bia.json');
    const loginAs = (profile: string, password: string) =>
      cli(['login', '--profile', profile, '--base-url', app.baseUrl, '-u', bia.user.username, '--password-stdin'], { input: `${password}\n`, configFile });
    expect((await loginAs('phone', bia.password)).code).toBe(0);
    expect((await loginAs('laptop', bia.password)).code).toBe(0);

    const listed = await cli(['sessions', 'list', '--profile', 'phone', '--json'], { configFile });
    expect(listed.code, shown(listed)).toBe(0);
    const sessions = JSON.parse(listed.stdout) as Array<{ id: number; current: boolean }>;
    expect(sessions).toHaveLength(3); // createUser's key, the phone's and the laptop's
    expect(sessions.filter((session) => session.current)).toHaveLength(1);
    expect(listed.stdout).not.toMatch(/plq_/);

    const weak = await cli(['password', '--profile', 'phone', '--password-stdin'], { input: `${bia.password}\ncurta\n`, configFile });
    expect(weak.code, shown(weak)).toBe(3);
    expect(weak.stderr).toContain('new_password');
    const changed = await cli(['password', '--profile', 'phone', '--password-stdin'], { input: `${bia.password}\numa senha nova e comprida\n`, configFile });
    expect(changed.code, shown(changed)).toBe(0);
    expect(changed.stdout).toContain('Password changed; 2 other keys revoked');
    const laptop = await cli(['sessions', 'list', '--profile', 'laptop', '--json'], { configFile });
    expect(laptop.code, shown(laptop)).toBe(3);
    expect(JSON.parse(laptop.stderr), shown(laptop)).toMatchObject({ status: 401, exit_code: 3 }); // under --json, the error is JSON

    expect((await loginAs('laptop', 'uma senha nova e comprida')).code).toBe(0);
    const now = JSON.parse((await cli(['sessions', 'list', '--profile', 'phone', '--json'], { configFile })).stdout) as Array<{ id: number; current: boolean }>;
    const other = now.find((session) => !session.current)!;
    const revoked = await cli(['sessions', 'revoke', String(other.id), '--profile', 'phone'], { configFile });
    expect(revoked.code, shown(revoked)).toBe(0);
    expect((await cli(['sessions', 'list', '--profile', 'laptop'], { configFile })).code).toBe(3);
  });

  it("keeps the device token with the profile and sends it at login, and logs in with an unlock mail's token (auth unlock, --unlock-token)", async () => {
    const dora = await createUser(app, { password: 'a senha longa da dora' });
    const configFile = join(work, 'dora.json');
    const loginAs = (profile: string, extra: string[] = []) =>
      cli(['login', '--profile', profile, '--base-url', app.baseUrl, '-u', dora.user.username, '--password-stdin', ...extra], { input: `${dora.password}\n`, configFile });
    expect((await loginAs('desk')).code).toBe(0);
    const deviceToken = JSON.parse(await readFile(configFile, 'utf8')).profiles.desk.deviceToken as string;
    expect(deviceToken).toMatch(/^plqd_/);
    // Someone fails at her name from everywhere: a profile without the token meets the delay...
    await app.accounts.models.LoginFailure.bulkCreate(Array.from({ length: 12 }, () => ({ subject: lockSubjects.identifier(dora.user.username), failed_at: new Date(), pending: false })));
    const delayed = await loginAs('new-laptop', []);
    expect(delayed.code, shown(delayed)).not.toBe(0);
    expect(delayed.stderr).toContain('login_locked');
    // ...the desk's profile sends its token and is in at once, keeping the same token.
    const desk = await loginAs('desk');
    expect(desk.code, shown(desk)).toBe(0);
    expect(JSON.parse(await readFile(configFile, 'utf8')).profiles.desk.deviceToken).toBe(deviceToken);
    // The new laptop asks for an unlock mail and logs in with its token.
    const asked = await cli(['auth', 'unlock', '--username', dora.user.username], { configFile });
    expect(asked.code, shown(asked)).toBe(0);
    let unlockToken: string | undefined;
    for (let tries = 0; tries < 100 && !unlockToken; tries += 1) {
      const toDora = (await readMails(app)).filter((mail) => recipients(mail.email).includes(dora.user.email));
      unlockToken = /Unlock token: (plqu_[A-Za-z0-9_-]+)/.exec(toDora.at(-1)?.email.text ?? '')?.[1];
      if (!unlockToken) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(unlockToken).toBeDefined();
    const unlocked = await loginAs('new-laptop', ['--unlock-token', unlockToken!]);
    expect(unlocked.code, shown(unlocked)).toBe(0);
    expect(JSON.parse(await readFile(configFile, 'utf8')).profiles['new-laptop'].deviceToken).toMatch(/^plqd_/);
    await app.accounts.models.LoginFailure.destroy({ where: { subject: lockSubjects.identifier(dora.user.username) } });
  });

  it('lists the municipalities of a state, one page and every page', async () => {
    // --json prints a page's items (issue 46 §4); --envelope the whole answer, the page's count and links with them.
    const page = await cli(['municipios', 'list', '--uf', '35', '--json']);
    expect(page.code, shown(page)).toBe(0);
    const items = JSON.parse(page.stdout) as Array<{ codigo_uf: number }>;
    expect(items.length === 30 && items.every((municipality) => municipality.codigo_uf === 35)).toBe(true);
    expect(JSON.parse((await cli(['municipios', 'list', '--uf', '35', '--envelope'])).stdout)).toMatchObject({ count: 645, total_pages: 22, results: items }); // the seed's page, no envelope

    const table = await cli(['municipios', 'list', '--uf', '35']);
    expect(table.stdout).toMatch(/│ 3500105\s*│ Adamantina/);
    expect(table.stdout).toContain('645 result(s), page 1 of 22');

    const all = await cli(['municipios', 'list', '--uf', '35', '--all', '--json']);
    expect(all.code, shown(all)).toBe(0);
    const everything = JSON.parse(all.stdout) as Array<{ codigo_ibge: number }>;
    expect(everything).toHaveLength(645);
    expect(new Set(everything.map((municipality) => municipality.codigo_ibge)).size).toBe(645);
    expect(all.stderr).toBe(''); // no progress bar without a terminal
  });

  it.skipIf(!existsSync('/usr/bin/script'))('shows a progress bar on a terminal while it pages through a list', async () => {
    // script(1) gives the command a terminal (stdout and stderr both go to it).
    const command = [process.execPath, bin, 'municipios', 'list', '--uf', '35', '--all'].map((word) => `'${word}'`).join(' ');
    const env = { ...process.env, PALANQUE_CONFIG: join(work, 'config', 'palanque.json') };
    const result = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr: '' }));
      child.stdin.end();
    });
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toMatch(/municipios list \[[^\]]*\] 100% \| 22\/22 pages/);
    expect(result.stdout).toContain('645 result(s)');
  });

  it('adds an entity from a JSON file and lists it', async () => {
    const candidate = tryResolvePointer(loadSpec(), '#/components/examples/NewCandidateEntity/value') as Record<string, unknown>;
    const file = join(work, 'candidate.json');
    await writeFile(file, JSON.stringify(candidate));
    const added = await cli(['entities', 'add', '--tp', 'candidato', '--file', file, '--json']);
    expect(added.code, shown(added)).toBe(0);
    // --json prints the answer's data: the entity itself.
    const data = JSON.parse(added.stdout);
    expect(data).toMatchObject({ nome: candidate.nome, cpf: candidate.cpf });
    const listed = await cli(['entities', 'list', '--tp', 'candidato']);
    expect(listed.stdout).toContain(String(candidate.nome));
    const shownEntity = await cli(['entities', 'get', '--id', String(data.id)]);
    expect(shownEntity.stdout).toMatch(new RegExp(`nome\\s*│ ${String(candidate.nome)}`));
  });

  it('imports contacts from a CSV file sent as it is, then lists them (palanque contacts)', async () => {
    const entity = await cli(['entities', 'add', '--tp', 'candidato', '--data', JSON.stringify({ nome: 'Contatos da Campanha' }), '--json']);
    expect(entity.code, shown(entity)).toBe(0);
    const { id } = JSON.parse(entity.stdout) as { id: number };
    const file = join(work, 'contatos.csv');
    await writeFile(file, 'telefone;nome;tags\n(21) 98765-4321;Mariana Souza;voluntarios\n1234;Errado;\n');
    // A rejected line: the valid one goes in, --json prints the answer as ever, stderr lists the rejected
    // lines and the command exits 5 (EXIT.rejected) for a script to notice; --allow-rejects accepts them.
    const imported = await cli(['contacts', 'import', '--entity-id', String(id), '--file', file, '--json']);
    expect(imported.code, shown(imported)).toBe(5);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 2, inserted: 1, rejected: 1, rejections: [{ line: 3, reason: 'telefone: not a valid phone number' }] });
    // Under --json the report is JSON (issue 46 §4), its message the same text.
    expect(JSON.parse(imported.stderr)).toMatchObject({ error: { code: 'rejected_lines', message: expect.stringMatching(/^1 of 2 line\(s\) rejected, the others imported:\n {2}line 3: telefone: not a valid phone number\n.*--allow-rejects/s) }, exit_code: 5 });
    const allowed = await cli(['contacts', 'import', '--entity-id', String(id), '--file', file, '--allow-rejects']);
    expect(allowed.code, shown(allowed)).toBe(0);
    expect(allowed.stdout).toMatch(/unchanged\s*│ 1\b/);
    expect(allowed.stderr).toContain('line 3: telefone: not a valid phone number');
    const fromStdin = await cli(['contacts', 'import', '--entity-id', String(id), '--file', '-', '--json'], { input: 'phone\n21 98765-4321\n' });
    expect(fromStdin.code, shown(fromStdin)).toBe(0);
    expect(fromStdin.stderr).toBe('');
    expect(JSON.parse(fromStdin.stdout), shown(fromStdin)).toMatchObject({ rows: 1, unchanged: 1 });
    const listed = await cli(['contacts', 'list', '--entity-id', String(id), '--tag', 'voluntarios', '--json']);
    expect(JSON.parse(listed.stdout), shown(listed)).toEqual([expect.objectContaining({ phone: '+5521987654321', name: 'Mariana Souza' })]);
  });

  it('operators add (its name until issue 21) sends the invitation and says on stderr that it is invitations send now, --json intact', async () => {
    const entity = await cli(['entities', 'add', '--tp', 'candidato', '--data', JSON.stringify({ nome: 'Equipe por Convite' }), '--json']);
    expect(entity.code, shown(entity)).toBe(0);
    const { id } = JSON.parse(entity.stdout) as { id: number };
    const added = await cli(['operators', 'add', '--entity-id', String(id), '--email', 'joana.lima@exemplo.com.br', '--role', 'operator', '--json']);
    expect(added.code, shown(added)).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ email: 'joana.lima@exemplo.com.br', role: 'operator', state: 'pending' });
    expect(added.stderr).toContain('`palanque operators add` is now `palanque invitations send`. Nobody is added to a team directly');
    expect(added.stderr).toContain(`joins entity ${id}'s team only by accepting`);
    expect(added.stderr).toContain(`palanque invitations list --entity-id ${id}`);
    const sent = await cli(['invitations', 'send', '--entity-id', String(id), '--email', 'carlos.pereira@exemplo.com.br', '--role', 'viewer', '--json']);
    expect(sent.code, shown(sent)).toBe(0);
    expect(sent.stderr).toBe('');
    // Hidden from the group's help and the completion.
    expect((await cli(['operators', '--help'])).stdout).not.toMatch(/^\s+add\b/m);
  });

  it('round-trips an entity: entities get --json prints the data that entities add --file takes back', async () => {
    const candidate = tryResolvePointer(loadSpec(), '#/components/examples/NewCandidateEntity/value') as Record<string, unknown>;
    const created = await cli(['entities', 'add', '--tp', 'candidato', '--data', JSON.stringify({ ...candidate, cpf: undefined, titulo_eleitor: undefined, nome: 'Ida e Volta' }), '--json']);
    expect(created.code, shown(created)).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: number };
    expect(id).toEqual(expect.any(Number));

    const file = join(work, 'c.json');
    const read = await cli(['entities', 'get', '--id', String(id), '--json']);
    expect(read.code, shown(read)).toBe(0);
    await writeFile(file, read.stdout);
    const stored = JSON.parse(read.stdout) as Record<string, unknown>;
    expect(stored).toMatchObject({ id, nome: 'Ida e Volta' });
    expect(stored).not.toHaveProperty('success');

    const postedBack = await cli(['entities', 'add', '--file', file, '--json']);
    expect(postedBack.code, shown(postedBack)).toBe(0);
    expect(JSON.parse(postedBack.stdout)).toMatchObject({ id, nome: 'Ida e Volta' });
    const again = await cli(['entities', 'get', '--id', String(id), '--json']);
    const { updated_at: _before, ...unchanged } = stored;
    expect(JSON.parse(again.stdout)).toMatchObject(unchanged);

    const envelope = await cli(['entities', 'get', '--id', String(id), '--envelope']);
    expect(JSON.parse(envelope.stdout)).toMatchObject({ success: true, data: { id }, request_id: expect.any(String) });
  });

  it('reports an API error with the error model and the request id (exit 3)', async () => {
    const missing = await cli(['accounts', 'get', '999999']);
    expect(missing.code, shown(missing)).toBe(3);
    expect(missing.stderr).toMatch(/^Error 404 not_found: .+/m);
    const requestId = /^request id: (\S+)$/m.exec(missing.stderr)?.[1];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(app.logs.some((line) => line.request_id === requestId)).toBe(true);

    const invalid = await cli(['municipios', 'list', '--uf', '99', '--request-id', 'cli-test-invalid-uf']);
    expect(invalid.code, shown(invalid)).toBe(3);
    expect(invalid.stderr).toMatch(/^Error 400 bad_request: /m);
    expect(invalid.stderr).toMatch(/^ {2}- query codigo_uf: .*\[maximum\] \(value: 99\)$/m);
    expect(invalid.stderr).toContain('request id: cli-test-invalid-uf');
  });

  it('reports a server it cannot reach as a network error (exit 4)', async () => {
    const port = await freePort();
    const result = await cli(['--base-url', `http://127.0.0.1:${port}`, '--no-retry', 'status']);
    expect(result.code, shown(result)).toBe(4);
    expect(result.stderr).toContain(`Network error: GET http://127.0.0.1:${port}/api/controle/basic_status/ failed`);
    expect(result.stderr).toContain('ECONNREFUSED');
  });

  it('exits 2 on usage errors, with a hint', async () => {
    const mistakes = [
      ['municipios', 'lst'],
      ['municipios', 'list', '--uf', 'SP'],
      ['entities', 'list', '--tp', 'prefeito'],
      ['accounts', 'get'],
      ['entities', 'add', '--tp', 'candidato'],
      ['entities', 'add', '--data', '{not json'],
      ['--no-such-option'],
      ['municipios'],
      // The contract leaves --id optional; the server says it is missing (400): still the user's mistake.
      ['entities', 'get'],
      ['user', 'create', '--admin'],
    ];
    const results = await Promise.all(mistakes.map((args) => cli(args)));
    results.forEach((result, index) => {
      expect(result.code, `${mistakes[index]!.join(' ')}\n${shown(result)}`).toBe(2);
      expect(result.stderr).toMatch(/error: |Usage: palanque municipios|^Error 400 bad_request: /m);
    });
    expect(results[0]!.stderr).toContain('(Did you mean list?)');
    expect(results[1]!.stderr).toContain("option '--uf <integer>' argument 'SP' is invalid");
    expect(results[4]!.stderr).toContain('this command needs a request body: --file <path>, --data <json>');
    expect(results[8]!.stderr).toMatch(/^Error 400 bad_request: .+\n {2}- query id: is required \[required\]$/m);
    expect(results[8]!.stderr).toContain('(add --help for usage and examples)');
    expect(results[9]!.stderr).toContain("error: required option '--username <name>' not specified");
  });

  it('has --help with examples everywhere', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('$ palanque municipios list --uf 35');
    expect(top.stdout).toMatch(/Exit codes:[\s\S]*3 {2}API error[\s\S]*4 {2}network error/);
    const pages = [['municipios', '--help'], ['municipios', 'list', '--help'], ['sms', 'send', '--help'], ['user', 'create', '--help'], ['db', 'migrate', '--help'], ['login', '--help'], ['completion', '--help'], ['help', 'entities']];
    const helps = await Promise.all(pages.map((args) => cli(args)));
    helps.forEach((help, index) => {
      expect(help.code, `${pages[index]!.join(' ')}\n${shown(help)}`).toBe(0);
      expect(help.stdout, pages[index]!.join(' ')).toMatch(/Examples:\n {2}\$ palanque /);
    });
    expect(helps[1]!.stdout).toContain('Calls GET /api/municipios/ (operation listMunicipalities; no key needed).');
  });

  it('prints a bash completion script that completes commands, options and values', async () => {
    const script = await cli(['completion', 'bash']);
    expect(script.code).toBe(0);
    await writeFile(join(work, 'completion.bash'), script.stdout);
    const complete = async (line: string) => {
      const probe = `source ${join(work, 'completion.bash')}; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _palanque_completion; echo "\${COMPREPLY[*]}"`;
      return (await run('bash', ['-c', probe], work)).stdout.trim().split(' ');
    };
    expect(await complete("palanque muni")).toEqual(['municipios']);
    expect(await complete("palanque municipios ''")).toEqual(expect.arrayContaining(['list', 'add', 'import']));
    expect(await complete("palanque municipios list --u")).toEqual(['--uf']);
    expect(await complete("palanque entities list --tp ''")).toEqual(['candidato', 'concorrente', 'partido']);
  });

  it('logs out: the key is revoked on the server and removed from the profile', async () => {
    const file = join(work, 'config', 'palanque.json');
    const { token } = JSON.parse(await readFile(file, 'utf8')).profiles.default;
    const result = await cli(['logout']);
    expect(result.code, shown(result)).toBe(0);
    expect(result.stdout).toContain('Logged out');
    expect(await app.accounts.tokens.authenticate(token)).toBeUndefined();
    const profile = JSON.parse(await readFile(file, 'utf8')).profiles.default;
    // The device token stays: it names this machine, not the session, so the next login here is trusted.
    expect(profile).toEqual({ baseUrl: app.baseUrl, username: admin.user.username, userId: admin.user.id, deviceToken: expect.stringMatching(/^plqd_/) });
    const whoami = await cli(['whoami']);
    expect(whoami.code).toBe(1);
    expect(whoami.stderr).toContain('Not logged in');
  });
});

describe('against a scripted server (retries, bodies as sent)', () => {
  let server: Server;
  let scriptedUrl = '';
  let script: Array<{ status: number; headers?: Record<string, string>; body: string }> = [];
  let bodies: unknown[] = [];
  const envelope = (data: unknown) => JSON.stringify({ success: true, data, message: 'ok', request_id: 'scripted' });
  const unavailable = JSON.stringify({
    success: false,
    error: { code: 'service_unavailable', message: 'SMS credentials need SECRETS_KEY, which this server lacks.', details: [] },
    request_id: 'scripted-503',
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        if (text) bodies.push(JSON.parse(text));
        const next = script.length > 1 ? script.shift()! : script[0]!;
        res.writeHead(next.status, { 'Content-Type': 'application/json', ...next.headers }).end(next.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    scriptedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const answering = (...answers: typeof script) => {
    script = answers;
    bodies = [];
  };

  it('fails at once with the server\'s message on a 503 whose Retry-After is an hour', async () => {
    answering({ status: 503, headers: { 'Retry-After': '3600' }, body: unavailable });
    const began = Date.now();
    const result = await cli(['--base-url', scriptedUrl, 'status']);
    expect(Date.now() - began).toBeLessThan(5000);
    expect(result.code, shown(result)).toBe(3);
    expect(result.stderr).toContain('Error 503 service_unavailable: SMS credentials need SECRETS_KEY, which this server lacks.');
    expect(result.stderr).not.toContain('retrying');
  });

  it('says each wait on stderr while it retries a short Retry-After', async () => {
    answering({ status: 503, headers: { 'Retry-After': '1' }, body: unavailable }, { status: 429, headers: { 'Retry-After': '0' }, body: unavailable }, { status: 200, body: envelope({ status: 'ok' }) });
    const result = await cli(['--base-url', scriptedUrl, 'status', '--json']);
    expect(result.code, shown(result)).toBe(0);
    expect(result.stderr).toBe('503 from server, retrying in 1 s (1/3)\n429 from server, retrying in 0 s (2/3)\n');
    expect(JSON.parse(result.stdout)).toEqual({ status: 'ok' });
  });

  it('sends SMS recipients as written, for the server to find the numbers in', async () => {
    answering({ status: 201, body: envelope({ id: 1, accepted: 3 }) });
    const written = '(21) 98765-4321, 21 98765-4322\n+55 21 98765-4323';
    const result = await cli(['--base-url', scriptedUrl, 'sms', 'send', '--credential', '3', '--title', 'Convite', '--message', 'Olá', '--to', written, '--json']);
    expect(result.code, shown(result)).toBe(0);
    expect(bodies).toEqual([{ titulo: 'Convite', credencial: 3, mensagem: { mensagem: 'Olá', recipient_list_str: written } }]);

    // A list longer than a batch is cut between entries, never inside a number.
    answering({ status: 201, body: envelope({ id: 2, accepted: 2 }) });
    const batched = await cli(['--base-url', scriptedUrl, 'sms', 'send', '--credential', '3', '--title', 'Convite', '--message', 'Olá', '--to', written, '--batch-size', '2', '--json']);
    expect(batched.code, shown(batched)).toBe(0);
    // The whole list is judged by the preview first (one call here), then sent batch by batch.
    expect(bodies.map((body) => (body as { mensagem: { recipient_list_str: string } }).mensagem.recipient_list_str)).toEqual([
      '(21) 98765-4321\n21 98765-4322\n+55 21 98765-4323',
      '(21) 98765-4321\n21 98765-4322',
      '+55 21 98765-4323',
    ]);
  });
});

describe('every operation of the spec', () => {
  const spec = loadSpec() as Record<string, unknown>;
  type Node = Record<string, unknown>;
  const deref = (node: unknown): Node => {
    const ref = (node as Node | undefined)?.$ref;
    return (typeof ref === 'string' ? tryResolvePointer(spec, ref) : node) as Node;
  };
  const operations = Object.entries(spec.paths as Record<string, Node>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({ path, method, operation: operation as Node, operationId: String((operation as Node).operationId) as OperationId })),
  );

  it('cli/spec-operations.ts is what `npm run generate` writes from spec/openapi.yaml', async () => {
    const committed = await readFile(join(root, 'cli', 'spec-operations.ts'), 'utf8');
    expect(committed, 'cli/spec-operations.ts is stale: run `npm run generate`').toBe(render(extractOperations(spec)));
  });

  it('has a command for each operationId, with an argument or option for each of its parameters', () => {
    const program = buildProgram();
    const find = (path: readonly string[]) => path.reduce<Command | undefined>((at, name) => at?.commands.find((command) => command.name() === name), program);
    expect(operations.length).toBeGreaterThan(50);
    const missing: string[] = [];
    for (const { operationId, operation } of operations) {
      const naming = COMMANDS[operationId];
      const command = naming && find(naming.path);
      if (!command) {
        missing.push(operationId);
        continue;
      }
      if (naming.custom) continue;
      const flags = command.options.map((option) => option.long);
      const argumentNames = command.registeredArguments.map((argument) => argument.name());
      for (const parameter of ((operation.parameters as unknown[]) ?? []).map(deref)) {
        const name = String(parameter.name);
        if (['X-Request-Id', 'Idempotency-Key'].includes(name)) continue;
        const flag = naming.flags?.[name] ?? name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/[^A-Za-z0-9]+/g, '-').toLowerCase();
        if (parameter.in === 'path') expect(argumentNames, `${operationId} ${name}`).toContain(name);
        else expect(flags, `${operationId} ${name}`).toContain(`--${flag}`);
      }
      // A body is given whole with --file or --data (a GET's body is not sent: fetch cannot).
      if (operation.requestBody && command.parent && !operationId.startsWith('get') && !operationId.startsWith('list')) {
        expect(flags, operationId).toEqual(expect.arrayContaining(['--file', '--data']));
      }
    }
    expect(missing, 'operations without a command in cli/operations.ts').toEqual([]);
  });

  /**
   * Values for parameters the spec gives no example of but the server needs (it says so in 400s: the
   * seed declares them optional). By name, or by `operationId.name`.
   */
  const SAMPLES: Record<string, string> = {
    email: 'nova.pessoa@exemplo.com.br',
    id: '1',
    entity_id: '1',
    'hub.mode': 'subscribe',
    'hub.challenge': '1158201444',
    'hub.verify_token': 'not-the-verify-token',
    code: 'an-authorization-code',
    state: 'a-state-palanque-did-not-sign',
    'getSocialnetRemovalStatus.id': 'abcdef123456',
    'listScenarioRequests.state': 'pending',
    'listTeamInvitations.state': 'pending',
    'listSmsCampaigns.state': 'sending',
    'listJobs.state': 'dead',
    // An acronym is looked up among the loaded elections (none in the sweep: 400); a number is not.
    'searchCandidacies.partido': '13',
    'verifyEmail.token': 'a-token-palanque-did-not-mail',
  };

  const ACTS_ON_AN_ACCOUNT = new Set<string>(['deactivateUser', 'reactivateUser', 'endUserSessions']);

  it('runs every operation against the live server through the CLI: each reaches its endpoint', async () => {
    const key = (await app.accounts.tokens.issue(admin.user.id)).key;
    const bystander = await createUser(app);
    const env = { PALANQUE_TOKEN: key, PALANQUE_BASE_URL: app.baseUrl };
    const configFile = join(work, 'sweep.json');
    const outcomes: string[] = [];
    const problems: string[] = [];
    const queue = operations.filter(({ operationId }) => !COMMANDS[operationId].custom);
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const { operationId, operation, method, path } = next;
        const args = [...COMMANDS[operationId].path];
        // The admins' operations on an account act on a bystander: ending the sweep's own sessions would end the sweep.
        if (path.includes('{user_id}')) args.push(String(ACTS_ON_AN_ACCOUNT.has(operationId) ? bystander.user.id : admin.user.id));
        if (path.includes('{sync_id}')) args.push('6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f');
        if (path.includes('{import_id}')) args.push('5d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a');
        // A queue with no such job: 404 (retryJob), an empty list (listJobs), no campaign 77 (purgeJobs: 404).
        if (path.includes('{queue}')) args.push('sms-send');
        if (path.includes('{job_id}')) args.push('7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d');
        // No campaign has this id: 404, answered by its handler.
        if (path.includes('{campaign_id}')) args.push('2147483647');
        // Not one of the sweep's own keys: a revocation would end the sweep.
        if (path.includes('{session_id}')) args.push('2147483647');
        // No contact has this id: 404, answered by its handler.
        if (path.includes('{contact_id}')) args.push('2147483647');
        // No credential has this id: 404, answered by its handler.
        if (path.includes('{credential_id}')) args.push('2147483647');
        // No conversation has this id: 404, answered by its handler.
        if (path.includes('{conversation_id}')) args.push('2147483647');
        // No Page is connected with this id: 404, answered by its handler.
        if (path.includes('{page_id}')) args.push('999999999999');
        // No notification, alert rule, push subscription, webhook endpoint, delivery or calendar line has this id: 404, answered by its handler.
        for (const name of ['notification_id', 'rule_id', 'subscription_id', 'endpoint_id', 'delivery_id', 'calendar_id']) if (path.includes(`{${name}}`)) args.push('2147483647');
        // The spec's example of each query and header parameter that has one (1 for a required one without).
        for (const parameter of ((operation.parameters as unknown[]) ?? []).map(deref)) {
          // Conditional headers are left out: their examples name versions of records the sweep does not have.
          if (parameter.in === 'path' || ['X-Request-Id', 'Idempotency-Key', 'If-None-Match', 'If-Match'].includes(String(parameter.name))) continue;
          const schema = deref(parameter.schema);
          const example =
            SAMPLES[`${operationId}.${String(parameter.name)}`] ??
            SAMPLES[String(parameter.name)] ??
            parameter.example ??
            schema.example ??
            (parameter.required ? 1 : undefined);
          const flag = COMMANDS[operationId].flags?.[String(parameter.name)] ?? String(parameter.name).replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/[^A-Za-z0-9]+/g, '-').toLowerCase();
          if (example !== undefined) args.push(`--${flag}`, String(example));
        }
        const content = (deref(operation.requestBody) as Node | undefined)?.content as Record<string, Node> | undefined;
        if (content && method !== 'get') {
          const media = Object.values(content)[0]!;
          // A text body (importContacts' CSV) goes as it is written; the others as JSON.
          const value = deref(Object.values(media.examples as Node)[0]).value;
          args.push('--data', typeof value === 'string' ? value : JSON.stringify(value));
        }
        const requestId = `cli-sweep-${operationId}`;
        const result = await cli([...args, '--json', '--no-retry', '--request-id', requestId], { env, configFile });
        // 5: an import answered, with rejected lines (importContacts' example has one).
        // Under --json an API error is the last line of stderr, as JSON (issue 46 §4); one that is not JSON fails the sweep.
        const report = result.code === 3 ? (JSON.parse(result.stderr.trimEnd().split('\n').at(-1)!) as { status: number; error: { code: string } }) : undefined;
        const [status, code] = report ? [String(report.status), report.error.code] : result.code === 0 || result.code === 5 ? ['200', 'ok'] : [];
        const logged = app.logs.find((line) => line.request_id === requestId && (line.req as Node | undefined)?.method === method.toUpperCase());
        const what = `${operationId} (palanque ${args.join(' ')})\n${shown(result)}`;
        outcomes.push(`${operationId}: exit ${result.code}, ${status} ${code}`);
        if (![0, 3, 5].includes(result.code ?? -1)) problems.push(`not an answer of the server: ${what}`);
        // Never a request the server finds malformed (the CLI built it), never a failure or a missing handler.
        else if (code === 'bad_request' || status === '500' || status === '501') {
          // What the server logged of the failure (its stack), for a 500 seen only on a loaded machine.
          const failures = app.logs.filter((line) => line.request_id === requestId && line.err).map((line) => JSON.stringify(line.err));
          problems.push(`answered ${status} ${code}: ${what}${failures.length ? `--- the server logged\n${failures.join('\n')}\n` : ''}`);
        }
        else if (!logged && operationId !== 'listMunicipalities') problems.push(`no ${method.toUpperCase()} logged with request id ${requestId}: ${what}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(problems, `outcomes:\n${outcomes.sort().join('\n')}`).toEqual([]);
    expect(outcomes.length).toBe(operations.filter(({ operationId }) => !COMMANDS[operationId].custom).length);
    // One CLI process per operation (over 100 of them), four at a time on CI's two cores, each operation's
    // first request compiling its validators on the server: 84 s on a quiet machine, 300 s once on a loaded one.
  }, 600_000);
});

describe('against the Prism mock (--mock)', () => {
  let mock: RunningMock;
  beforeAll(async () => {
    mock = await startPrismMock();
  }, 60_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it('answers from the spec without a server or a login', async () => {
    const env = { PALANQUE_MOCK_URL: mock.baseUrl };
    const list = await cli(['municipios', 'list', '--uf', '33', '--mock', '--json'], { env });
    expect(list.code, shown(list)).toBe(0);
    expect(Array.isArray(JSON.parse(list.stdout)), list.stdout.slice(0, 200)).toBe(true);
    const status = await cli(['status', '--mock'], { env });
    expect(status.code, shown(status)).toBe(0);
    expect(status.stdout).toMatch(/status\s*│ ok/);
  });

  it('sends a long recipient list as several campaigns (bulk send)', async () => {
    const numbers = join(work, 'numbers.txt');
    await writeFile(numbers, ['+5511999990001', '+5511999990002', '+5511999990003', '+5511999990004', '+5511999990005'].join('\n') + '\n');
    const args = ['sms', 'send', '--mock', '--credential', '3', '--title', 'Convite', '--message', 'Reunião hoje às 19h', '--to-file', numbers, '--batch-size', '2'];
    const json = await cli([...args, '--json'], { env: { PALANQUE_MOCK_URL: mock.baseUrl } });
    expect(json.code, shown(json)).toBe(0);
    // --json prints each campaign's data; --envelope each whole answer.
    const campaigns = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(campaigns).toHaveLength(3);
    for (const campaign of campaigns) expect(campaign).toMatchObject({ id: expect.any(Number), accepted: expect.any(Number), state: expect.any(String) });
    const envelopes = await cli([...args, '--envelope'], { env: { PALANQUE_MOCK_URL: mock.baseUrl } });
    expect((JSON.parse(envelopes.stdout) as Array<{ success: boolean; data: unknown }>).every((answer) => answer.success && typeof answer.data === 'object')).toBe(true);
    const table = await cli(args, { env: { PALANQUE_MOCK_URL: mock.baseUrl } });
    expect(table.code, shown(table)).toBe(0);
    expect(table.stdout).toMatch(/^3 campaigns: /m);
  });
});

it('builds the binary it tests', () => {
  expect(existsSync(bin)).toBe(true);
});
