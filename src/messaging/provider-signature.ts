/**
 * The SMS provider's request signature (Twilio's `X-Twilio-Signature`,
 * https://www.twilio.com/docs/usage/security#validating-requests): base64 of the HMAC-SHA1, keyed with
 * the account's auth token, of the full URL the provider requested followed, for a form POST, by each
 * form field's name and value, sorted by name. A GET's parameters are already in the URL.
 */
import { hmac, sameBytes } from '../security/signatures.js';

export function providerSignature(authToken: string, url: string, form: Record<string, string> = {}): string {
  const data = Object.keys(form)
    .sort()
    .reduce((signed, name) => signed + name + form[name], url);
  return hmac('sha1', authToken, Buffer.from(data, 'utf8')).toString('base64');
}

export function providerSignatureMatches(authToken: string, signature: string, url: string, form: Record<string, string> = {}): boolean {
  return sameBytes(Buffer.from(signature, 'base64'), Buffer.from(providerSignature(authToken, url, form), 'base64'));
}
