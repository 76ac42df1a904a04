/**
 * The `state` of an OAuth flow: what ties a provider's redirect back to the user who started the flow
 * (RFC 6749 §10.12, CSRF). It is `<payload>.<mac>`, both base64url: the payload names a random nonce,
 * the user, the provider and the expiry; the MAC is an HMAC-SHA256 under a key derived from SECRETS_KEY.
 * The signature lets a forged or altered state be refused before any database work; the row kept per
 * nonce (by its hash) makes each state single-use and holds the PKCE verifier, sealed.
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { DataTypes, Op, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { SecretBox } from '../security/secret-box.js';
import { hmac, sameText } from '../security/signatures.js';
import type { LinkableProvider } from './providers.js';

export const STATE_LIFETIME_MS = 10 * 60_000;

interface StateRow {
  nonce_hash: string;
  user_id: number;
  provider: LinkableProvider;
  redirect_uri: string;
  verifier_sealed: string;
  expires_at: Date;
  used_at: Date | null;
}

interface StatePayload {
  n: string;
  u: number;
  p: LinkableProvider;
  /** Expiry, in milliseconds since the epoch. */
  e: number;
}

export interface IssuedState {
  state: string;
  expiresAt: Date;
  /** PKCE (RFC 7636): the challenge goes to the consent page, the verifier stays here. */
  codeChallenge: string;
}

/** A state checked and used up: whose it was and what the token exchange needs. */
export interface ConsumedState {
  userId: number;
  redirectUri: string;
  codeVerifier: string;
}

/** Why a state was refused, in words for `error.message`. */
export type StateRefusal = 'forged' | 'expired' | 'used' | 'other_provider' | 'foreign';

export class OAuthStates {
  private readonly model: ModelStatic<Model<StateRow, Partial<StateRow>>>;
  private readonly key: string;

  constructor(
    sequelize: Sequelize,
    private readonly box: SecretBox,
    secretsKey: string,
  ) {
    // A key of its own, so a state's MAC can never be confused with anything else made with SECRETS_KEY.
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(secretsKey, 'base64'), Buffer.alloc(0), 'palanque oauth state', 32)).toString('base64');
    this.model = sequelize.define<Model<StateRow, Partial<StateRow>>>(
      'OAuthState',
      {
        nonce_hash: { type: DataTypes.STRING(64), primaryKey: true },
        user_id: DataTypes.INTEGER,
        provider: DataTypes.STRING(20),
        redirect_uri: DataTypes.STRING(2048),
        verifier_sealed: DataTypes.TEXT,
        expires_at: DataTypes.DATE,
        used_at: DataTypes.DATE,
      },
      { tableName: 'oauth_states', timestamps: false },
    );
  }

  async issue(userId: number, provider: LinkableProvider, redirectUri: string): Promise<IssuedState> {
    const now = Date.now();
    await this.model.destroy({ where: { expires_at: { [Op.lt]: new Date(now - 24 * 3600_000) } } }); // housekeeping
    const nonce = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now + STATE_LIFETIME_MS);
    await this.model.create({
      nonce_hash: hashOf(nonce),
      user_id: userId,
      provider,
      redirect_uri: redirectUri,
      verifier_sealed: this.box.seal(verifier),
      expires_at: expiresAt,
      used_at: null,
    });
    const payload = Buffer.from(JSON.stringify({ n: nonce, u: userId, p: provider, e: expiresAt.getTime() } satisfies StatePayload)).toString('base64url');
    return { state: `${payload}.${this.mac(payload)}`, expiresAt, codeChallenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  /**
   * Checks `state` for `provider` (and, when given, `userId`) and uses it up. A state issued to another
   * user is refused without being used up: whoever sent it must not be able to spoil its owner's flow.
   */
  async consume(state: string, provider: LinkableProvider, userId?: number): Promise<ConsumedState | StateRefusal> {
    const payload = this.verified(state);
    if (!payload) return 'forged';
    if (payload.p !== provider) return 'other_provider';
    if (payload.e <= Date.now()) return 'expired';
    if (userId !== undefined && payload.u !== userId) return 'foreign';
    const now = new Date();
    const nonceHash = hashOf(payload.n);
    const [used] = await this.model.update({ used_at: now }, { where: { nonce_hash: nonceHash, used_at: null, expires_at: { [Op.gt]: now } } });
    if (used !== 1) return 'used';
    const row = (await this.model.findByPk(nonceHash, { raw: true })) as StateRow | null;
    if (!row || row.user_id !== payload.u) return 'forged';
    return { userId: row.user_id, redirectUri: row.redirect_uri, codeVerifier: this.box.open(row.verifier_sealed) };
  }

  /**
   * Uses up a valid state without linking anything (the provider reported an error). With `userId`, only
   * a state of that user: nobody else may spoil its owner's flow.
   */
  async discard(state: string, provider: LinkableProvider, userId?: number): Promise<void> {
    const payload = this.verified(state);
    if (payload?.p === provider && (userId === undefined || payload.u === userId)) await this.model.update({ used_at: new Date() }, { where: { nonce_hash: hashOf(payload.n), used_at: null } });
  }

  private verified(state: string): StatePayload | undefined {
    const [payload, mac, extra] = state.split('.');
    if (!payload || !mac || extra !== undefined || !sameText(mac, this.mac(payload))) return undefined;
    try {
      const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<StatePayload>;
      const valid = typeof parsed.n === 'string' && Number.isInteger(parsed.u) && (parsed.p === 'searchnet' || parsed.p === 'socialvideo') && Number.isFinite(parsed.e);
      return valid ? (parsed as StatePayload) : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return hmac('sha256', this.key, payload).toString('base64url');
  }
}

function hashOf(nonce: string): string {
  return createHash('sha256').update(nonce).digest('hex');
}
