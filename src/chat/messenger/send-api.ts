/**
 * The social network's send API, as its Messenger Platform documents it
 * (https://developers.facebook.com/docs/messenger-platform/reference/send-api):
 * POST {graph}/{version}/{PAGE_ID}/messages with the Page's access token, a JSON body
 * `{ recipient: { id: PSID }, messaging_type: 'RESPONSE', message: { text } }`; on success
 * `{ recipient_id, message_id }`. Errors are `{ error: { message, type, code, error_subcode, fbtrace_id } }`.
 * SOCIALNET_GRAPH_URL points it at another host with the same API (the simulator in tests).
 *
 * The API takes no idempotency key, so what a failed send means is said as for SMS (messaging/provider.ts):
 * `refused` (a 4xx the network explains: it will fail again), `not_accepted` (a rate limit or temporary
 * refusal, or no connection ever made: not taken, may pass later) or `unknown` (a timeout, a reset
 * connection, a 5xx, an answer that cannot be read: the person may have it).
 */
import { NEVER_CONNECTED, ProviderError } from '../../messaging/provider.js';

export interface MessengerSend {
  pageId: string;
  accessToken: string;
  /** The person's page-scoped id. */
  recipientId: string;
  text: string;
}

export interface MessengerSendApi {
  /** The network's id of the message sent (its `mid`). */
  send(message: MessengerSend): Promise<{ messageId: string }>;
}

export interface MessengerSendApiOptions {
  /** SOCIALNET_GRAPH_URL, without a trailing slash. */
  graphUrl: string;
  /** SOCIALNET_GRAPH_VERSION, such as v25.0. */
  version: string;
  timeoutMs?: number;
}

/**
 * Graph error codes of a message not taken, which may pass later: 4, 17, 32 and 613 are rate limits,
 * 1200 a temporary send failure (https://developers.facebook.com/docs/messenger-platform/error-codes).
 */
const NOT_TAKEN_CODES = new Set([4, 17, 32, 613, 1200]);
const DEFAULT_TIMEOUT_MS = 15_000;

type GraphError = { message?: unknown; code?: unknown; error_subcode?: unknown };

export class HttpMessengerSendApi implements MessengerSendApi {
  private readonly timeoutMs: number;

  constructor(private readonly options: MessengerSendApiOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async send({ pageId, accessToken, recipientId, text }: MessengerSend): Promise<{ messageId: string }> {
    const url = `${this.options.graphUrl}/${this.options.version}/${encodeURIComponent(pageId)}/messages`;
    const response = await this.post(url, accessToken, { recipient: { id: recipientId }, messaging_type: 'RESPONSE', message: { text } });
    const body = (await response.json().catch(() => ({}))) as { message_id?: unknown; error?: GraphError };
    if (response.ok && typeof body.message_id === 'string' && body.message_id !== '') return { messageId: body.message_id };
    if (response.ok) throw new ProviderError(`The social network answered ${response.status} without a message id`, 'unknown', undefined);
    throw errorOf(response.status, body.error ?? {});
  }

  private async post(url: string, accessToken: string, body: object): Promise<Response> {
    try {
      return await fetch(url, {
        method: 'POST',
        // The token in a header rather than the query string, so that it stays out of access logs.
        headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const neverConnected = typeof cause?.code === 'string' && NEVER_CONNECTED.has(cause.code);
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `${(error as Error).message}${cause?.code ? ` (${String(cause.code)})` : ''}`;
      throw new ProviderError(`The social network could not be reached: ${reason}`, neverConnected ? 'not_accepted' : 'unknown', undefined);
    }
  }
}

/** `code/subcode` (or `code`), as the inbox shows it; what the error means for the message. */
function errorOf(status: number, error: GraphError): ProviderError {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const subcode = typeof error.error_subcode === 'number' ? error.error_subcode : undefined;
  const shown = code === undefined ? undefined : subcode === undefined ? String(code) : `${code}/${subcode}`;
  const outcome = status >= 500 ? 'unknown' : status === 429 || (code !== undefined && NOT_TAKEN_CODES.has(code)) ? 'not_accepted' : 'refused';
  return new ProviderError(`The social network answered ${status}: ${typeof error.message === 'string' ? error.message : 'no explanation'}`, outcome, shown);
}
