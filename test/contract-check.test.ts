/**
 * The contract check (tools/contract/, npm run contract:check): each breaking rule is proven by breaking a
 * copy of the latest release once and finding that rule at its pointer; a copy changed in every way a
 * client can ignore passes; decisions match their break and one that matches nothing is refused; the
 * releases cannot be rewritten; the SDK's version and CHANGELOG.md follow the releases.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withApiSection } from '../tools/contract/changelog.js';
import { checkContract } from '../tools/contract/check.js';
import { BREAKING_RULES, type Change, diffContracts } from '../tools/contract/diff.js';
import { cutRelease } from '../tools/contract/release.js';
import { judge, readReleases, readWaivers, type Waiver } from '../tools/contract/releases.js';
import type { Obj } from '../tools/contract/schema-view.js';

const root = path.resolve(import.meta.dirname, '..');
const releasesDir = path.join(root, 'spec', 'releases');
const latestFile = readReleases(releasesDir).at(-1)!.file;
// The bundles are plain JSON; the tests reach into them by the names they know.
type Doc = any;
const latest = (): Doc => JSON.parse(readFileSync(latestFile, 'utf8'));
const schemas = (doc: Doc) => doc.components.schemas;
const JSON_BODY = 'content/application~1json/schema';
const LOGIN = `#/paths/~1api~1auth~1login/post/requestBody/${JSON_BODY}`;
const MUNICIPALITY = `#/paths/~1api~1municipios~1/get/responses/200/${JSON_BODY}/properties/results/items`;
const LIST_MUNICIPALITIES = '#/paths/~1api~1municipios~1/get';

const temps: string[] = [];
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'palanque-contract-test-'));
  temps.push(dir);
  return dir;
};

const breaking = (changes: Change[]) => changes.filter((c) => c.breaking);
const finds = (changes: Change[], rule: string, operation: string, pointer: string) =>
  expect(changes.map((c) => `${c.rule} ${c.operation} ${c.pointer}`)).toContain(`${rule} ${operation} ${pointer}`);

/** One way to break the latest release per rule: [rule, how, operation, pointer]; base is changed when the break is a closing. */
const BREAKS: [string, (base: Doc, head: Doc) => void, string, string][] = [
  ['operation-removed', (_b, h) => delete h.paths['/api/auth/login'].post, 'login', '#/paths/~1api~1auth~1login/post'],
  [
    'parameter-removed',
    (_b, h) => (h.paths['/api/municipios/'].get.parameters = h.paths['/api/municipios/'].get.parameters.filter((p: Doc) => p.name !== 'codigo_uf')),
    'listMunicipalities',
    `${LIST_MUNICIPALITIES}/parameters/query/codigo_uf`,
  ],
  [
    'parameter-required',
    (_b, h) => (h.paths['/api/municipios/'].get.parameters.find((p: Doc) => p.name === 'codigo_uf').required = true),
    'listMunicipalities',
    `${LIST_MUNICIPALITIES}/parameters/query/codigo_uf`,
  ],
  [
    'request-body-required',
    (_b, h) => (h.paths['/api/sms/list_credentials/'].get.requestBody.required = true),
    'listSmsCredentials',
    '#/paths/~1api~1sms~1list_credentials~1/get/requestBody',
  ],
  ['request-field-required', (_b, h) => schemas(h).LoginRequest.required.push('device_token'), 'login', `${LOGIN}/properties/device_token`],
  ['request-type-narrowed', (_b, h) => (schemas(h).LoginRequest.properties.username.format = 'email'), 'login', `${LOGIN}/properties/username`],
  // A closing inside array items, which redocly diff misses.
  [
    'request-closed',
    (b) => delete schemas(b).MonitoredProfile.additionalProperties,
    'createSocialMonitor',
    `#/paths/~1api~1monitor_social~1add_monitor~1/post/requestBody/${JSON_BODY}/properties/profiles/items`,
  ],
  ['request-field-removed', (_b, h) => delete schemas(h).LoginRequest.properties.device_token, 'login', `${LOGIN}/properties/device_token`],
  [
    'enum-value-removed',
    (_b, h) => (schemas(h).StartSocialLoginRequest.properties.provider.enum = ['searchnet']),
    'startSocialLogin',
    `#/paths/~1api~1usuario~1start_social_login~1/post/requestBody/${JSON_BODY}/properties/provider`,
  ],
  ['response-field-removed', (_b, h) => delete schemas(h).Municipality.properties.nome, 'listMunicipalities', `${MUNICIPALITY}/properties/nome`],
  [
    'response-field-optional',
    (_b, h) => (schemas(h).Municipality.required = schemas(h).Municipality.required.filter((n: string) => n !== 'nome')),
    'listMunicipalities',
    `${MUNICIPALITY}/properties/nome`,
  ],
  [
    'response-field-nullable',
    (_b, h) => (schemas(h).Municipality.properties.nome = { oneOf: [schemas(h).Municipality.properties.nome, { type: 'null' }] }),
    'listMunicipalities',
    `${MUNICIPALITY}/properties/nome`,
  ],
  [
    'response-type-changed',
    (_b, h) => (schemas(h).Municipality.properties.codigo_ibge.type = ['integer', 'string']),
    'listMunicipalities',
    `${MUNICIPALITY}/properties/codigo_ibge`,
  ],
  [
    'response-enum-widened',
    (_b, h) => schemas(h).SmsCampaignState.enum.push('paused'),
    'sendSmsCampaign',
    `#/paths/~1api~1sms~1list_credentials~1/post/responses/200/${JSON_BODY}/properties/data/properties/state`,
  ],
  [
    'error-code-removed',
    (_b, h) => (schemas(h).ErrorCode.enum = schemas(h).ErrorCode.enum.filter((c: string) => c !== 'edit_conflict')),
    '*',
    '#/components/schemas/ErrorCode/enum/15',
  ],
  ['response-status-removed', (_b, h) => delete h.paths['/api/municipios/'].get.responses['304'], 'listMunicipalities', `${LIST_MUNICIPALITIES}/responses/304`],
  [
    'response-media-removed',
    (_b, h) => {
      const ok = h.paths['/api/municipios/'].get.responses['200'];
      ok.content = { 'application/xml': ok.content['application/json'] };
    },
    'listMunicipalities',
    `${LIST_MUNICIPALITIES}/responses/200/content/application~1json`,
  ],
];

describe('breaking rules', () => {
  it('has a broken copy for every rule', () => {
    expect(new Set(BREAKS.map(([rule]) => rule))).toEqual(new Set(Object.keys(BREAKING_RULES)));
  });

  it('finds nothing between the latest release and itself', () => {
    expect(diffContracts(latest(), latest())).toEqual([]);
  });

  for (const [rule, breakIt, operation, pointer] of BREAKS) {
    it(`${rule}: found at ${operation} ${pointer}`, () => {
      const base = latest();
      const head = latest();
      breakIt(base, head);
      const changes = diffContracts(base, head);
      finds(changes, rule, operation, pointer);
      expect(changes.find((c) => c.rule === rule)!.breaking).toBe(true);
    });
  }

  it('request-closed: a GET body closed is found (redocly diff misses it)', () => {
    const base = latest();
    delete schemas(base).SmsCampaignRequest.additionalProperties;
    finds(diffContracts(base, latest()), 'request-closed', 'listSmsCredentials', `#/paths/~1api~1sms~1list_credentials~1/get/requestBody/${JSON_BODY}`);
  });

  it('response-field-nullable: a type array gaining null is found as well as a union with null', () => {
    const head = latest();
    schemas(head).Municipality.properties.nome.type = ['string', 'null'];
    finds(diffContracts(latest(), head), 'response-field-nullable', 'listMunicipalities', `${MUNICIPALITY}/properties/nome`);
  });

  it('judges a schema by what it says, not how: moving it behind $ref and allOf changes nothing', () => {
    const head = latest();
    const { nome, ...others } = schemas(head).Municipality.properties;
    schemas(head).MunicipalityName = { type: 'object', required: ['nome'], properties: { nome } };
    schemas(head).Municipality = {
      allOf: [{ $ref: '#/components/schemas/MunicipalityName' }, { ...schemas(head).Municipality, properties: others }],
    };
    schemas(head).Municipality.allOf[1].required = schemas(head).Municipality.allOf[1].required.filter((n: string) => n !== 'nome');
    expect(breaking(diffContracts(latest(), head))).toEqual([]);
  });
});

describe('changes a client can ignore', () => {
  it('pass, each found as not breaking', () => {
    const head = latest();
    const s = schemas(head);
    head.paths['/api/new-thing/'] = { get: { operationId: 'newThing', responses: { 200: { description: 'ok' } } } };
    head.paths['/api/municipios/'].get.parameters.push({ name: 'nome', in: 'query', required: false, schema: { type: 'string' } });
    s.LoginRequest.properties.remember_me = { type: 'boolean' }; // optional request field
    s.LoginRequest.required = ['username']; // a request field made optional
    delete s.StartSocialLoginRequest.additionalProperties; // a request opened
    s.StartSocialLoginRequest.properties.provider.enum.push('socialnet'); // a request enum widened
    s.LoginRequest.properties.username.type = ['string', 'null']; // a request type widened
    s.Municipality.properties.regiao = { type: 'string' }; // response field added
    s.ErrorCode.enum.push('new_code'); // error codes may grow
    s.SmsCampaignState['x-extensible-enum'] = true; // an enum that says clients must expect new values
    s.SmsCampaignState.enum.push('paused');
    head.paths['/api/municipios/'].get.responses['418'] = { description: 'new status' };
    head.paths['/api/municipios/'].get.summary = 'reworded';
    const changes = diffContracts(latest(), head);
    expect(breaking(changes)).toEqual([]);
    expect(new Set(changes.map((c) => c.rule))).toEqual(
      new Set([
        'operation-added',
        'parameter-added',
        'request-field-added',
        'request-widened',
        'enum-value-added',
        'response-field-added',
        'error-code-added',
        'response-status-added',
      ]),
    );
  });
});

const change = (over: Partial<Change> = {}): Change => ({
  rule: 'request-closed',
  breaking: true,
  pointer: LOGIN,
  operation: 'login',
  message: 'unknown fields are now refused',
  ...over,
});
const waiver = (over: Partial<Waiver> = {}): Waiver => ({
  release: 'next',
  rule: 'request-closed',
  operation: 'login',
  pointers: [LOGIN],
  reason: 'why',
  affects: 'who',
  ...over,
});

describe('decisions (spec/breaking-changes.yaml)', () => {
  it('let through the break they name, by rule, operation and pointer', () => {
    const verdict = judge([change()], [waiver()]);
    expect(verdict.undecided).toEqual([]);
    expect(verdict.stale).toEqual([]);
    expect(verdict.decided).toHaveLength(1);
  });

  it('leave a break of another rule, operation or pointer undecided, and are refused as matching nothing', () => {
    for (const other of [waiver({ rule: 'request-field-required' }), waiver({ operation: 'logout' }), waiver({ pointers: [`${LOGIN}/properties/x`] })]) {
      const verdict = judge([change()], [other]);
      expect(verdict.undecided).toHaveLength(1);
      expect(verdict.stale).toEqual([{ waiver: other, pointer: other.pointers[0] }]);
    }
  });

  it('refuse each listed pointer that matches nothing, even when the others match', () => {
    const w = waiver({ pointers: [LOGIN, `${LOGIN}/properties/gone`] });
    expect(judge([change()], [w]).stale).toEqual([{ waiver: w, pointer: `${LOGIN}/properties/gone` }]);
  });

  it('must name rule, operation, pointer, reason, affects and a release after the first, or next', () => {
    const dir = tempDir();
    const file = path.join(dir, 'breaking-changes.yaml');
    writeFileSync(file, `breaks:\n  - { release: next, rule: request-closed, operation: login, pointer: '${LOGIN}', affects: who }\n`);
    expect(() => readWaivers(file, ['2026-11-24', '2026-11-29'])).toThrow(/reason is missing/);
    writeFileSync(file, `breaks:\n  - { release: '2026-11-24', rule: request-closed, operation: login, pointer: x, reason: r, affects: a }\n`);
    expect(() => readWaivers(file, ['2026-11-24', '2026-11-29'])).toThrow(/neither "next" nor a release after the first/);
    writeFileSync(file, `breaks:\n  - { release: next, rule: made-up, operation: login, pointer: x, reason: r, affects: a }\n`);
    expect(() => readWaivers(file, ['2026-11-24', '2026-11-29'])).toThrow(/not a breaking rule/);
  });
});

describe('the repository', () => {
  it('passes: every break since the first release is decided, the SDK is at the version the releases require', () => {
    const state = checkContract(root, latest());
    expect(state.problems).toEqual([]);
    expect(state.history.map((t) => `${t.from}->${t.to} ${t.sdk}`)).toEqual(['2026-11-24->2026-11-29 2.0.0']);
    expect(state.first.operations).toBe(55);
  });

  it('refuses a break of the working contract that is not decided, naming it', () => {
    const head = latest();
    delete head.paths['/api/auth/login'].post;
    expect(checkContract(root, head).problems).toEqual([
      'the working contract against release 2026-11-29: undecided breaking change operation-removed in login at #/paths/~1api~1auth~1login/post: POST /api/auth/login was removed',
    ]);
  });

  it('keeps CHANGELOG.md\'s API section as the releases write it (npm run changelog)', () => {
    const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
    expect(withApiSection(changelog, checkContract(root, latest()))).toBe(changelog);
    expect(changelog).toMatch(/\*\*breaking, decided \d+\*\* `request-closed` `login`/);
  });
});

/** A copy of what the check reads, to change without touching the repository. */
function copyOfRepository(): string {
  const dir = tempDir();
  for (const part of ['spec/releases', 'spec/breaking-changes.yaml', 'sdk/package.json', 'CHANGELOG.md']) {
    mkdirSync(path.dirname(path.join(dir, part)), { recursive: true });
    cpSync(path.join(root, part), path.join(dir, part), { recursive: true });
  }
  return dir;
}

describe('releases (spec/releases/, append-only)', () => {
  it('each hashes to its line of SHA256SUMS, oldest first', () => {
    const sums = readFileSync(path.join(releasesDir, 'SHA256SUMS'), 'utf8');
    // sha256sum -c reads the same list.
    expect(execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: releasesDir, encoding: 'utf8' })).toMatch(/2026-11-24.json: OK\n2026-11-29.json: OK/);
    expect(readReleases(releasesDir).map((r) => r.name)).toEqual(sums.trim().split('\n').map((l) => l.split(/\s+/)[1]!.replace('.json', '')));
  });

  it('cannot be rewritten, added without a line, or listed out of order', () => {
    const dir = path.join(copyOfRepository(), 'spec', 'releases');
    const first = path.join(dir, '2026-11-24.json');
    const bytes = readFileSync(first);
    writeFileSync(first, bytes.toString().replace('"1.0.0"', '"1.0.1"'));
    expect(() => readReleases(dir)).toThrow(/release 2026-11-24.json was changed: .* releases are append-only/);
    writeFileSync(first, bytes);
    writeFileSync(path.join(dir, '2026-12-01.json'), '{}');
    expect(() => readReleases(dir)).toThrow(/2026-12-01.json is not listed in SHA256SUMS/);
    rmSync(path.join(dir, '2026-12-01.json'));
    const sums = readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8').trim().split('\n');
    writeFileSync(path.join(dir, 'SHA256SUMS'), `${[...sums].reverse().join('\n')}\n`);
    expect(() => readReleases(dir)).toThrow(/oldest first/);
  });

  it('ask the SDK for a new major after a decided break, and the check says when it has not moved', () => {
    const dir = copyOfRepository();
    const sdk = path.join(dir, 'sdk', 'package.json');
    writeFileSync(sdk, readFileSync(sdk, 'utf8').replace(/"version": "[^"]+"/, '"version": "1.4.0"'));
    expect(checkContract(dir, latest()).problems).toEqual([
      "sdk/package.json's version is 1.4.0, but the contract's releases require at least 2.0.0",
    ]);
    const head = latest();
    delete head.paths['/api/auth/login'].post;
    writeFileSync(
      path.join(dir, 'spec', 'breaking-changes.yaml'),
      `${readFileSync(path.join(dir, 'spec', 'breaking-changes.yaml'), 'utf8')}  - { release: next, rule: operation-removed, operation: login, pointer: '#/paths/~1api~1auth~1login/post', reason: r, affects: a }\n`,
    );
    writeFileSync(sdk, readFileSync(sdk, 'utf8').replace(/"version": "[^"]+"/, '"version": "2.0.0"'));
    expect(checkContract(dir, head).problems).toEqual([
      "sdk/package.json's version is 2.0.0, but the contract's decided breaks since 2026-11-29 require at least 3.0.0",
    ]);
  });
});

describe('cutting a release (npm run contract:release)', () => {
  it('appends the working contract, hands it the decisions of next, moves the SDK and writes the changelog', () => {
    const dir = copyOfRepository();
    const head = latest();
    delete head.paths['/api/auth/login'].post;
    const waivers = path.join(dir, 'spec', 'breaking-changes.yaml');
    writeFileSync(
      waivers,
      `${readFileSync(waivers, 'utf8')}  - release: next\n    rule: operation-removed\n    operation: login\n    pointer: '#/paths/~1api~1auth~1login/post'\n    reason: r\n    affects: a\n`,
    );
    const sdk = path.join(dir, 'sdk', 'package.json');
    writeFileSync(sdk, readFileSync(sdk, 'utf8').replace(/"version": "[^"]+"/, '"version": "3.0.0"'));
    expect(() => cutRelease(dir, '2026-11-28', head)).toThrow(/must come after the latest, 2026-11-29/);

    cutRelease(dir, '2026-12-01', head);
    expect(readReleases(path.join(dir, 'spec', 'releases')).map((r) => r.name)).toEqual(['2026-11-24', '2026-11-29', '2026-12-01']);
    expect(readFileSync(waivers, 'utf8')).not.toMatch(/release: next/);
    const state = checkContract(dir, head);
    expect(state.problems).toEqual([]);
    expect(state.history.at(-1)).toMatchObject({ from: '2026-11-29', to: '2026-12-01', sdk: '3.0.0', bump: 'major' });
    expect(readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8')).toContain('### 2026-12-01 (SDK 3.0.0, major)');
  });

  it('refuses to cut a release over an undecided break, writing nothing', () => {
    const dir = copyOfRepository();
    const head = latest();
    delete head.paths['/api/auth/login'].post;
    expect(() => cutRelease(dir, '2026-12-01', head)).toThrow(/undecided breaking change operation-removed in login/);
    expect(readReleases(path.join(dir, 'spec', 'releases')).map((r) => r.name)).toEqual(['2026-11-24', '2026-11-29']);
  });
});

describe('npm run contract:check', () => {
  const run = (contract: Obj) => {
    const file = path.join(tempDir(), 'contract.json');
    writeFileSync(file, JSON.stringify(contract));
    try {
      return { code: 0, out: execFileSync('npx', ['tsx', 'tools/contract/main.ts', 'check', '--contract', file], { cwd: root, encoding: 'utf8', stdio: 'pipe' }) };
    } catch (error) {
      const e = error as { status: number; stdout: string; stderr: string };
      return { code: e.status, out: e.stdout + e.stderr };
    }
  };

  it('exits 0 on the latest release, and 1 naming an undecided break', () => {
    expect(run(latest())).toMatchObject({ code: 0, out: expect.stringContaining('contract check: passed') });
    const head = latest();
    schemas(head).Municipality.required = schemas(head).Municipality.required.filter((n: string) => n !== 'nome');
    const failed = run(head);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain(`undecided breaking change response-field-optional in listMunicipalities at ${MUNICIPALITY}/properties/nome`);
  }, 60_000);
});
