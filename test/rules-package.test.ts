/**
 * @palanque/rules (packages/rules, issue 44 §2): the rules the server and the stateful mock both apply,
 * one implementation that both import. Its types are written in the package, not taken from the SDK's
 * generated ones (it depends on neither); these checks hold them to the contract, so that a field renamed
 * or retyped in spec/ fails `npm run typecheck` here rather than drifting. That it imports nothing of the
 * server is `npm run lint:deps`'s rule `rules-stand-alone`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { CandidacyFields } from '@palanque/rules/candidacy-law';
import type { ElectionOverWarning, OutsideWindowWarning, WindowFacts } from '@palanque/rules/election-calendar';
import type { ErrorDetail } from '@palanque/rules/error-detail';
import { isBrazilianMobile, maskPhone } from '@palanque/rules/phones';
import { readRecipients, recipientListProblems } from '@palanque/rules/recipients';
import { isBrazilianMobile as mockIsBrazilianMobile, listedNumbers } from '../sdk/mock/messaging/phones.js';
import type { components } from '../sdk/schema.js';

type Schemas = components['schemas'];

describe('the rules package', () => {
  it("types what it reads and writes as the contract does", () => {
    expectTypeOf<ErrorDetail>().toEqualTypeOf<Schemas['ErrorDetail']>();
    expectTypeOf<Schemas['CandidateEntity']>().toExtend<CandidacyFields>();
    expectTypeOf<Schemas['SmsEffectiveWindow']>().toExtend<WindowFacts>();
    expectTypeOf<OutsideWindowWarning<Schemas['SmsEffectiveWindow']>>().toExtend<Schemas['SmsComplianceWarning']>();
    expectTypeOf<ElectionOverWarning>().toExtend<Schemas['SmsComplianceWarning']>();
  });

  it('depends on libphonenumber-js and @brazilian-utils alone, and the server on it by its workspace name', () => {
    const manifest = JSON.parse(readFileSync('packages/rules/package.json', 'utf8')) as { private: boolean; dependencies: Record<string, string> };
    expect(manifest.private).toBe(true);
    expect(Object.keys(manifest.dependencies)).toEqual(['@brazilian-utils/brazilian-utils', 'libphonenumber-js']);
    const root = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; workspaces: string[] };
    expect(root.workspaces).toContain('packages/rules');
    expect(root.dependencies['@palanque/rules']).toBeDefined();
  });
});

describe('one phone rule for the server and the mock', () => {
  // The mock read numbers by their digits before (issue 44): these were taken or refused differently.
  const numbers = ['+5511987654321', '+551132221234', '+5508001234567', '+12025550143', '+5511887654321', '+559196543210'];

  it('judges a Brazilian mobile the same way', () => {
    expect(numbers.map(mockIsBrazilianMobile)).toEqual(numbers.map(isBrazilianMobile));
    expect(numbers.map(isBrazilianMobile)).toEqual([true, false, false, false, false, false]);
  });

  it('reads a pasted list into the same numbers and details', () => {
    const list = '(11) 98765-4321, 11 98765 4321\n0800 123 4567; +1 202 555 0143\nnot a number\n(21) 3222-12';
    const server = readRecipients(list);
    const mock = listedNumbers(list);
    expect(mock.numbers).toEqual(server.numbers);
    expect(mock.repeated).toBe(1);
    expect(mock.problems).toEqual(recipientListProblems(server, 'mensagem.recipient_list_str'));
    expect(mock.problems.map((problem) => [problem.rule, problem.value])).toEqual([
      ['phone_number', 'not a number'],
      ['phone_number', '(21) 3222-12'],
    ]);
    expect(listedNumbers(' , ').problems).toEqual([{ location: 'body', field: 'mensagem.recipient_list_str', rule: 'not_blank', message: 'must hold at least one phone number' }]);
  });

  it('masks a number to its country code and last four digits, a one-digit country code too', () => {
    expect(maskPhone('+5511987654321')).toBe('+55*******4321');
    expect(maskPhone('+12025550143')).toBe('+1******0143');
  });
});
