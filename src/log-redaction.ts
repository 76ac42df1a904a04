/**
 * What the logs may not carry. Holds for every line written through a logger made with loggerOptions()
 * (the server's) and for every line of the request logger (http/request-logging.ts), whatever the root
 * logger: the value of any query parameter, header or logged field whose name says it is a credential
 * (token, password, secret, signature, authorization, cookie, api key, OAuth `code`/`state`, the social
 * network's `hub.verify_token`/`hub.challenge`, `signed_request`…) is written as `[REDACTED]`, and
 * e-mail addresses are masked (`a***@exemplo.com.br`) in logged URLs, query values and error texts.
 * Voters' personal data likewise: phone numbers are shown by their last four digits (`***4321`) in logged
 * URLs, query values, error texts and `reason`s, and the value of a parameter whose name says it is a
 * message's text (an SMS callback's `Body`, `text`, `mensagem`) by its length (`[23 chars]`), so a
 * provider's callback, forged or not, leaves a line that says which request it was and nothing it said.
 *
 * Fixed paths go through pino's `redact` (compiled once, cheap per line); what pino cannot address by
 * path (the query string inside `req.url`, header and parameter names of any case, texts quoting a
 * secret) goes through the serializers below. Their only walk, over an error's own fields, stops at a
 * small depth and breadth. What is not covered: a secret under a name that does not say so, logged in a
 * field this module does not know; a message's text inside an error's text or SQL (at `trace`, the SQL
 * statements: never on in production).
 */
import { pino } from 'pino';

export const REDACTED = '[REDACTED]';

/** Names (of parameters, headers, fields) whose values are credentials; compared without case. */
const SECRET_NAME =
  /pass(word|wd)?|token|secret|signature|authori[sz]ation|cookie|api[-_.]?key|private[-_.]?key|challenge|signed_request|credential|^(code|state|code_verifier|key|sig|otp|session|sessionid)$/i;

export function isSecretName(name: string): boolean {
  // `hub.verify_token`, `x-hub-signature-256`: the last dotted part decides as well as the whole.
  return SECRET_NAME.test(name) || SECRET_NAME.test(name.slice(name.lastIndexOf('.') + 1));
}

/**
 * An e-mail address, its `@` as is or encoded. Attempts start only where a local part starts (the
 * lookbehind) and each is bounded, so the cost stays linear in the text, whatever a request sends.
 */
const EMAIL = /(?<![\w.%+-])([\w.%+-])[\w.%+-]{0,63}(?:@|%40)(?=[A-Za-z0-9-]{1,63}\.)/g;

/** `ana.souza@exemplo.com.br` -> `a***@exemplo.com.br`. */
export function maskEmails(text: string): string {
  return text.includes('@') || text.includes('%40') ? text.replace(EMAIL, '$1***@') : text;
}

/**
 * A phone number: 10 to 15 digits, after an optional `+` (or `%2B`) and an opening parenthesis, between
 * single separators (`(21) 99876-5432`, `+55 21 99876 5432`); a clock's digits (`2026-11-28 20:49`) are not one.
 * A match starts only where no digit or letter stands before it and is bounded, so the cost stays linear
 * in the text.
 */
const PHONE = /(?<![\w.:])(?:\+|%2B)?\(?\d(?:[ ().-]{0,2}\d){9,14}(?![\w:])/gi;

/** How many of a number's last digits a log shows: enough to tell two numbers apart, too few to call one. */
const SHOWN_DIGITS = 4;

/** `+5521998765432` -> `***5432`, wherever a number stands in the text. */
export function maskPhones(text: string): string {
  return /\d{3}/.test(text) ? text.replace(PHONE, (number) => `***${number.replace(/\D/g, '').slice(-SHOWN_DIGITS)}`) : text;
}

/** Names of parameters that carry a message's text (an SMS and its reply, a chat answer); compared without case. */
const TEXT_NAME = /^(body|text|mensagem|message|msg)$/i;

export function isTextName(name: string): boolean {
  return TEXT_NAME.test(name);
}

/** A message's text as logged: its length only. */
export const textLength = (text: string) => `[${text.length} chars]`;

/** A text that may quote e-mail addresses and phone numbers, with both masked. */
const maskContacts = (text: string) => maskPhones(maskEmails(text));

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * A URL (absolute, or a path with its query) with secret query values redacted, texts by their length,
 * e-mails and phone numbers masked (a value is read decoded: `%2B55…` and `(21)+9…` are numbers too).
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return maskContacts(url);
  const hashAt = url.indexOf('#', queryAt);
  const query = url.slice(queryAt + 1, hashAt < 0 ? undefined : hashAt);
  const pairs = query.split('&').map((pair) => {
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    if (equals < 0) return maskContacts(pair);
    const plainName = decoded(name);
    if (isSecretName(plainName)) return `${name}=${REDACTED}`;
    const value = pair.slice(equals + 1);
    const plainValue = decoded(value);
    if (isTextName(plainName)) return `${name}=${textLength(plainValue)}`;
    const masked = maskPhones(plainValue);
    return `${name}=${maskEmails(masked === plainValue ? value : masked)}`;
  });
  return `${maskContacts(url.slice(0, queryAt))}?${pairs.join('&')}`;
}

/**
 * Header or parameter values, one level: secret names redacted, texts by their length, e-mails and phone
 * numbers masked, URLs' queries redacted.
 */
function redactEntries(entries: unknown, urlValued: ReadonlySet<string> = new Set()): unknown {
  if (!entries || typeof entries !== 'object') return entries;
  const clean: Record<string, unknown> = {};
  const valueOf = (name: string, value: unknown) => (typeof value !== 'string' ? value : isTextName(name) ? textLength(value) : maskContacts(value));
  for (const [name, value] of Object.entries(entries)) {
    if (isSecretName(name)) clean[name] = REDACTED;
    else if (typeof value === 'string') clean[name] = urlValued.has(name.toLowerCase()) ? redactUrl(value) : valueOf(name, value);
    else if (Array.isArray(value)) clean[name] = value.map((item) => valueOf(name, item));
    else clean[name] = value;
  }
  return clean;
}

const URL_HEADERS = new Set(['referer', 'location', 'content-location']);

/** A request as logged (pino's serialized form, or the fast path's `{ method, url }`). */
export function redactRequest<Req extends object>(req: Req): Req {
  if (!req || typeof req !== 'object') return req;
  const clean = { ...req } as Record<string, unknown>;
  if (typeof clean.url === 'string') clean.url = redactUrl(clean.url);
  if ('query' in clean) clean.query = redactEntries(clean.query);
  if ('params' in clean) clean.params = redactEntries(clean.params);
  if ('headers' in clean) clean.headers = redactEntries(clean.headers, URL_HEADERS);
  return clean as Req;
}

/** A response as logged: its headers (a redirect's Location may carry an OAuth state). */
export function redactResponse<Res extends object>(res: Res): Res {
  if (!res || typeof res !== 'object' || !('headers' in res)) return res;
  return { ...res, headers: redactEntries(res.headers, URL_HEADERS) };
}

/** Credentials quoted in a text: `name=value` pairs, JSON `"name": "value"`, `Token <key>`; e-mails and phone numbers. */
export function scrubText(text: string): string {
  return maskContacts(
    text
      .replace(/\b(Token|Bearer|Basic)\s+[\w.~+/=-]{4,}/gi, `$1 ${REDACTED}`)
      .replace(/([\w.[\]-]{1,64})=([^&\s"'<>,;]*)/g, (pair, name: string) => (isSecretName(name) ? `${name}=${REDACTED}` : pair))
      .replace(/"([\w.-]{1,64})"(\s*:\s*)"(?:[^"\\]|\\.){0,4096}"/g, (pair, name: string, colon: string) =>
        isSecretName(name) ? `"${name}"${colon}"${REDACTED}"` : pair,
      ),
  );
}

const MAX_DEPTH = 4;
const MAX_KEYS = 50;

/** A serialized error's fields (a driver's error carries its SQL, parameters, the request it made…). */
function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (!value || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.slice(0, MAX_KEYS).map((item) => scrubValue(item, depth + 1));
  const clean: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value).slice(0, MAX_KEYS)) {
    // An error's `code` is the driver's (ECONNREFUSED, 23505), not an OAuth code.
    clean[name] = isSecretName(name) && name !== 'code' ? REDACTED : scrubValue(item, depth + 1);
  }
  return clean;
}

/** An error as logged: pino's serialized form (message, stack, own fields, cause), scrubbed. */
export function redactError(err: Record<string, unknown>): Record<string, unknown> {
  return scrubValue(err, 0) as Record<string, unknown>;
}

/** Fixed paths pino redacts itself, on top of the serializers (which see only req, res and err). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.token',
  '*.token_key',
  '*.secret',
  '*.api_key',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
];

/**
 * The serializers for an app's loggers, taking raw values (the request logger wraps its own in pino's standard
 * ones, see http/request-logging.ts): `to` and `email` are the mailer's and the first admin's fields.
 */
export const redactingSerializers = {
  err: pino.stdSerializers.wrapErrorSerializer(redactError),
  req: redactRequest,
  res: redactResponse,
  to: (to: unknown) => (typeof to === 'string' ? maskEmails(to) : Array.isArray(to) ? to.map((item) => (typeof item === 'string' ? maskEmails(item) : item)) : to),
  email: (email: unknown) => (typeof email === 'string' ? maskEmails(email) : email),
  // Why a job or a check failed: often an error's text, which may quote a number (a provider's refusal).
  reason: (reason: unknown) => (typeof reason === 'string' ? scrubText(reason) : reason),
};

export const redactOptions = { paths: REDACT_PATHS, censor: REDACTED };
