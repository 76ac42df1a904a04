/**
 * The SMS provider, behind an interface so that the send job does not care who carries the message.
 * The implementation speaks Twilio's Programmable Messaging API over HTTP:
 * - sending: POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json, HTTP Basic auth with the account
 *   id and auth token, form fields To, From, Body and StatusCallback; 201 with the message's `sid` and
 *   `status` (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource);
 * - errors: JSON `{ code, message, status }`; a 4xx will fail again (a bad number, an unsubscribed
 *   recipient), a 429 or 5xx may pass later (https://www.twilio.com/docs/api/errors);
 * - delivery receipts and replies come back signed (provider-signature.ts).
 * SMS_PROVIDER_URL points it at another host with the same API (the simulator in tests).
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

/** A refusal or failure of the provider; `permanent` ones fail the same way if tried again. */
export class ProviderError extends Error {
  override name = 'ProviderError';

  constructor(
    message: string,
    readonly permanent: boolean,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface SmsProvider {
  send(account: ProviderAccount, sms: OutgoingSms): Promise<SentSms>;
}

const REQUEST_TIMEOUT_MS = 15_000;

export class HttpSmsProvider implements SmsProvider {
  constructor(private readonly baseUrl: string) {}

  async send(account: ProviderAccount, sms: OutgoingSms): Promise<SentSms> {
    const form = new URLSearchParams({ To: sms.to, From: sms.from, Body: sms.body });
    if (sms.statusCallback) form.set('StatusCallback', sms.statusCallback);
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/2010-04-01/Accounts/${encodeURIComponent(account.accountId)}/Messages.json`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${account.accountId}:${account.secret}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: form,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ProviderError(`The SMS provider could not be reached: ${(error as Error).message}`, false, undefined);
    }
    const body = (await response.json().catch(() => ({}))) as { sid?: unknown; status?: unknown; code?: unknown; message?: unknown };
    if (response.ok && typeof body.sid === 'string') return { sid: body.sid, status: typeof body.status === 'string' ? body.status : 'queued' };
    const permanent = response.status >= 400 && response.status < 500 && response.status !== 429;
    const code = body.code === undefined ? undefined : String(body.code);
    throw new ProviderError(`The SMS provider answered ${response.status}: ${typeof body.message === 'string' ? body.message : 'no explanation'}`, permanent, code);
  }
}
