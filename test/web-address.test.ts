/**
 * The address rules of research bookmarks and news sources (src/web-address.ts), as the spec states
 * them: absolute http(s) without credentials, normalised so that one page is recognised however it was
 * pasted, compared without scheme and `www.`.
 */
import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkWebAddress, MAX_ADDRESS_LENGTH } from '../src/web-address.js';

function addressOf(input: string) {
  const result = checkWebAddress(input);
  if (!result.ok) throw new Error(`refused ${input}: ${result.problem.rule}`);
  return result.address;
}

describe('checkWebAddress', () => {
  it('lower-cases scheme and host, drops the default port, the fragment, tracking parameters and a trailing slash', () => {
    const address = addressOf('  HTTPS://WWW.JornalDoVale.com.br:443/Politica/Eleicoes/?utm_source=zap&id=7&fbclid=abc&gclid=x#comentarios ');
    expect(address.normalised).toBe('https://www.jornaldovale.com.br/Politica/Eleicoes?id=7');
    expect(address.key).toBe('jornaldovale.com.br/Politica/Eleicoes?id=7');
    // The address as sent keeps its fragment and parameters (only parsed and re-serialised).
    expect(address.href).toBe('https://www.jornaldovale.com.br/Politica/Eleicoes/?utm_source=zap&id=7&fbclid=abc&gclid=x#comentarios');
  });

  it('gives one key to the same page pasted in different ways', () => {
    const keys = [
      'https://www.jornaldovale.com.br/',
      'http://jornaldovale.com.br',
      'HTTP://JORNALDOVALE.COM.BR/#topo',
      'https://www.jornaldovale.com.br/?utm_campaign=x&UTM_MEDIUM=y',
    ].map((input) => addressOf(input).key);
    expect(new Set(keys)).toEqual(new Set(['jornaldovale.com.br/']));
  });

  it('keeps what tells pages apart: path case, other parameters, other ports and sub-domains', () => {
    const keys = [
      'https://jornaldovale.com.br/a',
      'https://jornaldovale.com.br/A',
      'https://jornaldovale.com.br/a?page=2',
      'https://jornaldovale.com.br:8443/a',
      'https://blog.jornaldovale.com.br/a',
    ].map((input) => addressOf(input).key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('percent-encodes non-ASCII paths and turns international host names into punycode', () => {
    const address = addressOf('https://notícias.exemplo.com.br/eleição 2026');
    expect(address.normalised).toBe(`https://${domainToASCII('notícias.exemplo.com.br')}/elei%C3%A7%C3%A3o%202026`);
    expect(address.normalised).toMatch(/^https:\/\/xn--[a-z0-9-]+\.exemplo\.com\.br\//);
  });

  it.each([
    ['not a url', 'absolute_http_url'],
    ['/relative/path', 'absolute_http_url'],
    ['www.jornaldovale.com.br', 'absolute_http_url'],
    ['ftp://jornaldovale.com.br/', 'absolute_http_url'],
    ['javascript:alert(1)', 'absolute_http_url'],
    ['mailto:redacao@jornaldovale.com.br', 'absolute_http_url'],
  ])('refuses %j (%s), echoing it', (input, rule) => {
    const result = checkWebAddress(input);
    expect(result).toEqual({ ok: false, problem: { location: 'body', field: 'url', rule, message: expect.any(String), value: input } });
  });

  it('refuses credentials without echoing them', () => {
    const result = checkWebAddress('https://ana:segredo@jornaldovale.com.br/');
    expect(result).toEqual({ ok: false, problem: { location: 'body', field: 'url', rule: 'no_credentials', message: expect.any(String) } });
  });

  it('refuses an address longer than the limit once encoded', () => {
    const fits = `https://exemplo.com.br/${'a'.repeat(MAX_ADDRESS_LENGTH - 'https://exemplo.com.br/'.length)}`;
    expect(addressOf(fits).href).toHaveLength(MAX_ADDRESS_LENGTH);
    // 700 characters sent, but each "ç" becomes 6 once encoded.
    const grows = `https://exemplo.com.br/${'ç'.repeat(700)}`;
    expect(checkWebAddress(grows)).toMatchObject({ ok: false, problem: { field: 'url', rule: 'maxLength' } });
  });
});
