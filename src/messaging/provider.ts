/**
 * The SMS provider, behind an interface so that the send job does not care who carries the message.
 * The implementation speaks Twilio's Programmable Messaging API over HTTP:
 * - sending: POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json, HTTP Basic auth with the account
 *   id and auth token, form fields To, From, Body and StatusCallback; 201 with the message's `sid` and
 *   `status` (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource);
 * - listing: GET on the same address, filtered by `To`, `From` and `DateSent` (a UTC day, YYYY-MM-DD),
 *   `PageSize` per page, most recently sent first; each page has `messages` (with `sid`, `body`, `status`
 *   and `date_created` in RFC 2822, to the second) and `next_page_uri`, the path of the next page or null
 *   (https://www.twilio.com/docs/messaging/api/message-resource#read-multiple-message-resources);
 * - errors: JSON `{ code, message, status }`; a 4xx will fail again (a bad number, an unsubscribed
 *   recipient), a 429 or 5xx may pass later (https://www.twilio.com/docs/api/errors);
 * - delivery receipts and replies come back signed (provider-signature.ts).
 * SMS_PROVIDER_URL points it at another host with the same API (the simulator in tests).
 *
 * What a failed send means for the message is the error's `outcome`: `refused` (a 4xx other than 429:
 * not taken, and trying again fails the same way), `not_accepted` (a 429, or no connection was ever made:
 * not taken, and it may pass later) or `unknown` (a timeout, a connection reset, a 5xx, an answer that
 * cannot be read: the provider may have taken the message).
 */

export interface ProviderAccount {
  accountId: string;
  /** The account's auth token (the credential's secret, opened). */
  secret: string;
}

export interface OutgoingSms {
  from: string;
  to: string;
  body: string;
  /** Where the provider posts delivery receipts; none when the deployment's public address is unknown. */
  statusCallback: string | undefined;
}

export interface SentSms {
  sid: string;
  status: string;
}

/** A message as the provider lists it. */
export interface ListedSms {
  sid: string;
  to: string;
  from: string;
  body: string;
  status: string;
  /** When the provider created it, to the second. */
  dateCreated: Date;
}

export interface SentFilter {
  from: string;
  to: string;
  /** The UTC day the messages were sent, YYYY-MM-DD. */
  dateSent: string;
}

export type FailedSendOutcome = 'refused' | 'not_accepted' | 'unknown';

/** A refusal or failure of the provider, with what it means for the message (see above). */
export class ProviderError extends Error {
  override name = 'ProviderError';

  constructor(
    message: string,
    readonly outcome: FailedSendOutcome,
    readonly code: string | undefined,
  ) {
    super(message);
  }

  /** Trying again fails the same way. */
  get permanent(): boolean {
    return this.outcome === 'refused';
  }
}

export interface SmsProvider {
  send(account: ProviderAccount, sms: OutgoingSms): Promise<SentSms>;
  /** Every message of the account that matches the filter, all pages read. */
  list(account: ProviderAccount, filter: SentFilter): Promise<ListedSms[]>;
}

export interface HttpSmsProviderOptions {
  /** How long one request may take before it is abandoned (SMS_SEND_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Messages per page when listing (the provider allows up to 1,000). */
  pageSize?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_PAGE_SIZE = 100;
/** A listing longer than this is not a recipient's messages of a few days: something is wrong. */
const MAX_PAGES = 50;

/** fetch's causes for a connection that was never made, so no request reached the provider. */
export const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

type ProviderBody = { sid?: unknown; status?: unknown; code?: unknown; message?: unknown };

export class HttpSmsProvider implements SmsProvider {
  private readonly timeoutMs: number;
  private readonly pageSize: number;

  constructor(
    private readonly baseUrl: string,
    options: HttpSmsProviderOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  }

  private messagesUrl(account: ProviderAccount): string {
    return `${this.baseUrl}/2010-04-01/Accounts/${encodeURIComponent(account.accountId)}/Messages.json`;
  }

  async send(account: ProviderAccount, sms: OutgoingSms): Promise<SentSms> {
    const form = new URLSearchParams({ To: sms.to, From: sms.from, Body: sms.body });
    if (sms.statusCallback) form.set('StatusCallback', sms.statusCallback);
    const response = await this.request(account, this.messagesUrl(account), { method: 'POST', body: form });
    const body = (await response.json().catch(() => ({}))) as ProviderBody;
    if (response.ok && typeof body.sid === 'string') return { sid: body.sid, status: typeof body.status === 'string' ? body.status : 'queued' };
    if (response.ok) throw new ProviderError(`The SMS provider answered ${response.status} without a message id`, 'unknown', undefined);
    throw errorOf(response, body);
  }

  async list(account: ProviderAccount, filter: SentFilter): Promise<ListedSms[]> {
    const query = new URLSearchParams({ To: filter.to, From: filter.from, DateSent: filter.dateSent, PageSize: String(this.pageSize) });
    const listed: ListedSms[] = [];
    let url: string | null = `${this.messagesUrl(account)}?${query}`;
    for (let pages = 0; url !== null; pages += 1) {
      if (pages === MAX_PAGES) throw new ProviderError(`The SMS provider's list of messages has more than ${MAX_PAGES} pages`, 'unknown', undefined);
      const response = await this.request(account, url, { method: 'GET' });
      const body = (await response.json().catch(() => undefined)) as { messages?: unknown; next_page_uri?: unknown } | undefined;
      if (!response.ok) throw errorOf(response, (body ?? {}) as ProviderBody);
      if (!body || !Array.isArray(body.messages)) throw new ProviderError('The SMS provider answered a list without messages', 'unknown', undefined);
      listed.push(...body.messages.map(listedSms));
      // The next page's path is from the host's root, as the provider gives it.
      url = typeof body.next_page_uri === 'string' && body.next_page_uri !== '' ? new URL(body.next_page_uri, this.baseUrl).toString() : null;
    }
    return listed;
  }

  /** One authenticated request; a failure to get an answer becomes a ProviderError saying whether it may have arrived. */
  private async request(account: ProviderAccount, url: string, init: { method: string; body?: URLSearchParams }): Promise<Response> {
    try {
      return await fetch(url, {
        ...init,
        headers: {
          Authorization: `Basic ${Buffer.from(`${account.accountId}:${account.secret}`).toString('base64')}`,
          Accept: 'application/json',
          ...(init.body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const neverConnected = typeof cause?.code === 'string' && NEVER_CONNECTED.has(cause.code);
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `${(error as Error).message}${cause?.code ? ` (${String(cause.code)})` : ''}`;
      throw new ProviderError(`The SMS provider could not be reached: ${reason}`, neverConnected ? 'not_accepted' : 'unknown', undefined);
    }
  }
}

function errorOf(response: Response, body: ProviderBody): ProviderError {
  const outcome: FailedSendOutcome = response.status === 429 ? 'not_accepted' : response.status >= 400 && response.status < 500 ? 'refused' : 'unknown';
  const code = body.code === undefined ? undefined : String(body.code);
  return new ProviderError(`The SMS provider answered ${response.status}: ${typeof body.message === 'string' ? body.message : 'no explanation'}`, outcome, code);
}

function listedSms(item: unknown): ListedSms {
  const fields = (item ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
  return { sid: text('sid'), to: text('to'), from: text('from'), body: text('body'), status: text('status'), dateCreated: new Date(text('date_created')) };
}
