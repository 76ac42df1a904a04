/**
 * The external elections panel, behind an interface so that the sync job does not care how cards travel.
 * The panel publishes no public API, so Palanque defines the exchange and this adapter speaks it over
 * HTTP (ELECTIONS_PANEL_URL; a simulator in tests, src/simulators/elections-panel.ts):
 * - `POST {base}/v1/candidates/batches`, `Authorization: Bearer <the user's panel token>`,
 *   `Idempotency-Key: <sync id>` (a retry after a lost answer must not import twice), JSON
 *   `{ source: "palanque", candidates: [CandidateCard] }`;
 * - 200 or 201 with `{ batch_id, received }`;
 * - 401/403: the token is refused (retrying cannot help); other 4xx: the batch is refused, likewise;
 *   429, 5xx or no answer: the panel may take it later.
 */

/** A candidate's public campaign card: what a public panel may show, never documents or contacts. */
export interface CandidateCard {
  palanque_id: number;
  name: string | null;
  ballot_name: string | null;
  ballot_number: number | null;
  party: string | null;
  office: string | null;
  state: string | null;
  municipality: string | null;
  reelection: boolean | null;
  profiles: Array<{ network: string; username: string | null; link: string | null }>;
}

export interface BatchReceipt {
  batchId: string;
  received: number;
}

/** A refusal or failure of the panel; `permanent` ones fail the same way if tried again. */
export class PanelError extends Error {
  override name = 'PanelError';

  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface ElectionsPanel {
  sendCandidates(token: string, syncId: string, candidates: CandidateCard[]): Promise<BatchReceipt>;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class HttpElectionsPanel implements ElectionsPanel {
  constructor(private readonly baseUrl: string) {}

  async sendCandidates(token: string, syncId: string, candidates: CandidateCard[]): Promise<BatchReceipt> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/v1/candidates/batches`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Idempotency-Key': syncId, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ source: 'palanque', candidates }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new PanelError(`The elections panel could not be reached: ${(error as Error).message}`, false);
    }
    const body = (await response.json().catch(() => ({}))) as { batch_id?: unknown; received?: unknown; message?: unknown };
    if (response.ok && typeof body.batch_id === 'string') return { batchId: body.batch_id, received: Number(body.received ?? candidates.length) };
    const explanation = typeof body.message === 'string' ? body.message : 'no explanation';
    if (response.status === 401 || response.status === 403) throw new PanelError(`The elections panel refused the token (${response.status}: ${explanation})`, true);
    const permanent = response.status >= 400 && response.status < 500 && response.status !== 429;
    throw new PanelError(`The elections panel answered ${response.status}: ${explanation}`, permanent);
  }
}
