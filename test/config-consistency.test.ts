/**
 * Settings checked against each other at start (issue 43 §4, src/config.ts and src/messaging/settings.ts): BODY_LIMIT against what a
 * request body must carry (0 is refused, naming the variable, the value and the rule), a pasted recipient
 * list against SMS_MAX_RECIPIENTS, and the job timeout against the webhook timeout; the consistent but
 * surprising pair (SMS_MAX_RECIPIENTS above what a pasted list can hold) is a warning, not a refusal.
 */
import { describe, expect, it } from 'vitest';
import { configWarnings, loadConfig } from '../src/config.js';
import { CAMPAIGN_BODY, pastedListCapacity } from '../src/messaging/settings.js';
import { loadSpec } from './helpers/spec.js';

describe('BODY_LIMIT', () => {
  it('is refused at 0, with the variable, the value and the rule', () => {
    expect(() => loadConfig({ BODY_LIMIT: '0' })).toThrow('BODY_LIMIT: is 0 bytes; must be at least 16kb (16384 bytes): an SMS campaign');
    expect(() => loadConfig({ BODY_LIMIT: '0kb' })).toThrow(/BODY_LIMIT: is 0 bytes/);
    expect(() => loadConfig({ BODY_LIMIT: '16383' })).toThrow(/BODY_LIMIT: is 16383 bytes; must be at least 16kb/);
  });

  it('is refused when it cannot carry a pasted list as long as SMS_MAX_RECIPIENTS and the contract allow, naming both ways out', () => {
    // 64 kB carries (65536 - 16384) / 16 = 3072 numbers; the default cap is 10,000.
    expect(() => loadConfig({ BODY_LIMIT: '64kb' })).toThrow(
      'BODY_LIMIT: is 65536 bytes, which carries an SMS campaign of at most 3072 pasted numbers (16 bytes a number plus 16384 for the rest), fewer than the 10000 that SMS_MAX_RECIPIENTS (10000) and the contract (13333) allow: set BODY_LIMIT to at least 173kb, or SMS_MAX_RECIPIENTS to at most 3072',
    );
    // Either way out is accepted.
    expect(loadConfig({ BODY_LIMIT: '64kb', SMS_MAX_RECIPIENTS: '3072' }).bodyLimit).toBe(65_536);
    expect(loadConfig({ BODY_LIMIT: '173kb' }).bodyLimit).toBe(173 * 1024);
    // Above the contract's own bound, a bigger SMS_MAX_RECIPIENTS asks no more of BODY_LIMIT.
    expect(loadConfig({ BODY_LIMIT: '225kb', SMS_MAX_RECIPIENTS: '100000' }).bodyLimit).toBe(225 * 1024);
    expect(() => loadConfig({ BODY_LIMIT: '200kb', SMS_MAX_RECIPIENTS: '100000' })).toThrow(/fewer than the 13333 that SMS_MAX_RECIPIENTS \(100000\) and the contract \(13333\) allow/);
  });

  it('by default (1mb) carries the longest pasted list the contract allows', () => {
    const { byBodyLimit, byContract } = pastedListCapacity(loadConfig({}).bodyLimit);
    expect(byBodyLimit).toBeGreaterThan(byContract);
    expect(() => loadConfig({ SMS_MAX_RECIPIENTS: '100000' })).not.toThrow();
  });

  it("measures a pasted list by the contract's own bound on recipient_list_str", () => {
    const spec = loadSpec();
    const found: number[] = [];
    const walk = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'recipient_list_str' && value && typeof value === 'object' && 'maxLength' in value) found.push((value as { maxLength: number }).maxLength);
        else walk(value);
      }
    };
    walk(spec);
    expect(found.length).toBeGreaterThan(0);
    expect(new Set(found)).toEqual(new Set([CAMPAIGN_BODY.listMaxCharacters]));
  });
});

describe('SMS_MAX_RECIPIENTS beyond a pasted list', () => {
  it('is accepted with a warning: campaigns to contacts reach it, pasted lists do not', () => {
    const config = loadConfig({ SMS_MAX_RECIPIENTS: '100000' });
    const warnings = configWarnings(config);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^SMS_MAX_RECIPIENTS is 100000, but a pasted recipient list \(recipient_list_str\) carries about 13333 numbers at most/);
    expect(warnings[0]).toContain('only campaigns to contacts (mensagem.contatos) reach 100000');
  });

  it('gives no warning when a pasted list can hold as many', () => {
    expect(configWarnings(loadConfig({}))).toEqual([]);
    expect(configWarnings(loadConfig({ SMS_MAX_RECIPIENTS: '13333' }))).toEqual([]);
  });
});

describe('JOB_TIMEOUT_SECONDS against WEBHOOK_TIMEOUT_MS', () => {
  it('is refused shorter than one webhook try', () => {
    expect(() => loadConfig({ JOB_TIMEOUT_SECONDS: '20', SMS_SEND_TIMEOUT_MS: '1000', WEBHOOK_TIMEOUT_MS: '30000' })).toThrow(
      'JOB_TIMEOUT_SECONDS: is 20 s; must be at least WEBHOOK_TIMEOUT_MS (30000 ms)',
    );
    expect(loadConfig({ JOB_TIMEOUT_SECONDS: '30', SMS_SEND_TIMEOUT_MS: '1000', WEBHOOK_TIMEOUT_MS: '30000' }).jobTimeoutSeconds).toBe(30);
  });
});
