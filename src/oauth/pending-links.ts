/**
 * Pending links: what an OAuth callback found, held until the user who started the flow confirms it.
 * A callback proves that someone consented at the provider with the user's `state`, not that the user
 * did: whoever opened the consent URL chose the provider account. So nothing is linked there; the
 * account and its tokens (sealed under SECRETS_KEY by the caller) wait here, bound to the user who
 * started the flow, under a random id, until they confirm it with their key or it expires.
 *
 * Guarantees: a pending link is read only with its owner's id (anyone else's lookup finds nothing, as
 * for an id that does not exist), and listed only to its owner, without its tokens; it cannot be taken
 * from its expiry on; once confirmed it keeps no token; expired rows are removed by `purgeExpired`.
 */
import { randomUUID } from 'node:crypto';
import { DataTypes, Op, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { LinkableProvider, ProviderAccount } from './providers.js';

/** The tokens of a provider account, sealed already, as a social login keeps them. */
export interface SealedTokens {
  access_token_sealed: string;
  /** Null when the provider sent none (it does so on the first consent only). */
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  scope: string | null;
}

export interface PendingLinkRow {
  id: string;
  user_id: number;
  provider: LinkableProvider;
  external_id: string;
  display_name: string;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  scope: string | null;
  created_at: Date;
  expires_at: Date;
  confirmed_at: Date | null;
}

export class PendingLinks {
  private readonly model: ModelStatic<Model<PendingLinkRow, Partial<PendingLinkRow>>>;

  constructor(
    sequelize: Sequelize,
    private readonly lifetimeMs: number,
  ) {
    this.model = sequelize.define<Model<PendingLinkRow, Partial<PendingLinkRow>>>(
      'OAuthPendingLink',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: DataTypes.INTEGER,
        provider: DataTypes.STRING(20),
        external_id: DataTypes.STRING(255),
        display_name: DataTypes.STRING(255),
        access_token_sealed: DataTypes.TEXT,
        refresh_token_sealed: DataTypes.TEXT,
        token_expires_at: DataTypes.DATE,
        scope: DataTypes.STRING(1024),
        created_at: DataTypes.DATE,
        expires_at: DataTypes.DATE,
        confirmed_at: DataTypes.DATE,
      },
      { tableName: 'oauth_pending_links', timestamps: false },
    );
  }

  /** Holds `account` with its tokens for `userId`, who alone may confirm it before it expires. */
  async hold(userId: number, provider: LinkableProvider, account: ProviderAccount, tokens: SealedTokens): Promise<PendingLinkRow> {
    const now = Date.now();
    const row: PendingLinkRow = {
      id: randomUUID(),
      user_id: userId,
      provider,
      external_id: account.externalId,
      display_name: account.displayName.slice(0, 255),
      ...tokens,
      created_at: new Date(now),
      expires_at: new Date(now + this.lifetimeMs),
      confirmed_at: null,
    };
    await this.model.create(row);
    return row;
  }

  /** The pending link `id` of `userId`; undefined when there is none, or it is someone else's. */
  async ownedBy(userId: number, id: string): Promise<PendingLinkRow | undefined> {
    const row = (await this.model.findOne({ where: { id, user_id: userId }, raw: true })) as PendingLinkRow | null;
    return row ?? undefined;
  }

  /**
   * The links of `userId` still waiting for their confirmation (not confirmed, not expired at `now`),
   * newest first. Token columns are not even read.
   */
  async waitingFor(userId: number, now = Date.now()): Promise<Array<Omit<PendingLinkRow, keyof SealedTokens>>> {
    return (await this.model.findAll({
      attributes: ['id', 'user_id', 'provider', 'external_id', 'display_name', 'created_at', 'expires_at', 'confirmed_at'],
      where: { user_id: userId, confirmed_at: null, expires_at: { [Op.gt]: new Date(now) } },
      order: [['created_at', 'DESC']],
      raw: true,
    })) as unknown as Array<Omit<PendingLinkRow, keyof SealedTokens>>;
  }

  /** Marks it confirmed and drops its tokens, which now live on the social login. */
  async confirmed(id: string): Promise<void> {
    await this.model.update({ confirmed_at: new Date(), access_token_sealed: null, refresh_token_sealed: null }, { where: { id } });
  }

  /** Forgets a pending link that can never be confirmed (its account belongs to another user). */
  async discard(id: string): Promise<void> {
    await this.model.destroy({ where: { id } });
  }

  /** Housekeeping: removes the pending links past their expiry, confirmed or not; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.model.destroy({ where: { expires_at: { [Op.lte]: now } } });
  }
}

export function isExpired(row: Pick<PendingLinkRow, 'expires_at'>, now = Date.now()): boolean {
  return new Date(row.expires_at).getTime() <= now;
}
