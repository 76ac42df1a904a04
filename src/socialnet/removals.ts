/**
 * Data-removal requests from the social network. A request is recorded once per signed request (the
 * same one sent again gets the same confirmation code), and a background job deletes what Palanque holds
 * about the person: the social logins linking them to a user, and the profiles of entities that carry
 * their network id. Its status (received, processing, completed) and counts are kept for the person and
 * the admins to read.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DataTypes, Op, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { AccountModels, SocialLoginRow } from '../accounts/models.js';
import type { EntityModels } from '../entities/models.js';
import type { JobQueue } from '../jobs/index.js';

export type RemovalRequest = components['schemas']['RemovalRequest'];

export const REMOVAL_JOB = 'socialnet-removal';

interface RemovalRow {
  id: number;
  request_hash: string;
  confirmation_code: string;
  app_user_id: string;
  user_id: number | null;
  status: RemovalRequest['status'];
  removed_social_logins: number;
  removed_provider_tokens: number;
  removed_profiles: number;
  received_at: Date;
  completed_at: Date | null;
}

export interface RemovalDependencies {
  accounts: AccountModels;
  entities: EntityModels;
  jobs: JobQueue;
}

export class SocialnetRemovals {
  private readonly model: ModelStatic<Model<RemovalRow, Partial<RemovalRow>>>;

  constructor(
    sequelize: Sequelize,
    private readonly dependencies: RemovalDependencies,
  ) {
    this.model = sequelize.define<Model<RemovalRow, Partial<RemovalRow>>>(
      'SocialnetRemoval',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        request_hash: DataTypes.STRING(64),
        confirmation_code: DataTypes.STRING(64),
        app_user_id: DataTypes.STRING(255),
        user_id: DataTypes.INTEGER,
        status: DataTypes.STRING(20),
        removed_social_logins: DataTypes.INTEGER,
        removed_provider_tokens: DataTypes.INTEGER,
        removed_profiles: DataTypes.INTEGER,
        received_at: DataTypes.DATE,
        completed_at: DataTypes.DATE,
      },
      { tableName: 'socialnet_removals', timestamps: false },
    );
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs.register(REMOVAL_JOB, (data) => this.run((data as { removal_id: number }).removal_id));
  }

  /** Records the request of a verified signed request and queues the removal; `created` is false for a request seen before. */
  async receive(signedRequest: string, appUserId: string): Promise<{ created: boolean; code: string }> {
    const requestHash = createHash('sha256').update(signedRequest.trim()).digest('hex');
    const known = await this.find({ request_hash: requestHash });
    if (known) {
      // Still not started: its job may have been lost (the queue failed after the row was written), so
      // queue it again. A second run of a finished removal does nothing.
      if (known.status === 'received') await this.dependencies.jobs.enqueue(REMOVAL_JOB, { removal_id: known.id });
      return { created: false, code: known.confirmation_code };
    }

    // Who the person is in Palanque, found before their link is deleted: they may read the status.
    const login = (await this.dependencies.accounts.SocialLogin.findOne({ where: { provider: 'socialnet', external_id: appUserId }, raw: true })) as SocialLoginRow | null;
    let row: RemovalRow;
    try {
      const created = await this.model.create({
        request_hash: requestHash,
        confirmation_code: `rm_${randomBytes(12).toString('base64url')}`,
        app_user_id: appUserId,
        user_id: login?.user_id ?? null,
        status: 'received',
        received_at: new Date(),
      });
      row = created.get({ plain: true });
    } catch (error) {
      // The same request arrived twice at once: the first one recorded it.
      if (!(error instanceof UniqueConstraintError)) throw error;
      const first = await this.find({ request_hash: requestHash });
      if (!first) throw error;
      return { created: false, code: first.confirmation_code };
    }
    await this.dependencies.jobs.enqueue(REMOVAL_JOB, { removal_id: row.id });
    return { created: true, code: row.confirmation_code };
  }

  /** The request with this confirmation code, if the caller is an admin or the person concerned. */
  async readableBy(code: string, caller: { id: number; is_admin: boolean }): Promise<RemovalRequest | undefined> {
    const row = await this.find({ confirmation_code: code });
    if (!row || (!caller.is_admin && row.user_id !== caller.id)) return undefined;
    return viewOf(row);
  }

  private async find(where: Partial<Pick<RemovalRow, 'id' | 'request_hash' | 'confirmation_code'>>): Promise<RemovalRow | undefined> {
    return ((await this.model.findOne({ where, raw: true })) as RemovalRow | null) ?? undefined;
  }

  /**
   * The job: deletes the person's data and records what went, in one transaction that first claims the
   * request (received -> processing). A second run of the same request (it may be queued twice) finds it
   * claimed and does nothing; a run that dies rolls back, leaving the request received for a retry.
   */
  async run(id: number): Promise<{ status: string }> {
    const { accounts, entities } = this.dependencies;
    return this.model.sequelize!.transaction(async (transaction) => {
      const [claimed] = await this.model.update({ status: 'processing' }, { where: { id, status: 'received' }, transaction });
      if (claimed === 0) return { status: (await this.find({ id }))?.status ?? 'deleted' };
      const row = (await this.model.findByPk(id, { raw: true, transaction })) as RemovalRow | null;
      const theirLogins = { provider: 'socialnet', external_id: row!.app_user_id } as const;
      const providerTokens = await accounts.SocialLogin.count({ where: { ...theirLogins, access_token_sealed: { [Op.ne]: null } }, transaction });
      const socialLogins = await accounts.SocialLogin.destroy({ where: theirLogins, transaction });
      // The entities losing a profile get a new version, so a form still holding it (If-Match) cannot post it back.
      await entities.Entity.update(
        { version: entities.Entity.sequelize!.literal('version + 1') as unknown as number, updated_at: new Date(), updated_by: null },
        {
          where: {
            id: {
              [Op.in]: entities.Entity.sequelize!.literal(
                `(SELECT r.entity_id FROM social_references r JOIN social_network_entries e ON e.social_reference_id = r.id WHERE e.profile_id = ${entities.Entity.sequelize!.escape(row!.app_user_id)})`,
              ),
            },
          },
          transaction,
        },
      );
      const profiles = await entities.SocialNetworkEntry.destroy({ where: { profile_id: row!.app_user_id }, transaction });
      await this.model.update(
        {
          status: 'completed',
          completed_at: new Date(),
          removed_social_logins: socialLogins,
          // Provider tokens are held on the social logins (src/oauth/): they went with them.
          removed_provider_tokens: providerTokens,
          removed_profiles: profiles,
        },
        { where: { id }, transaction },
      );
      return { status: 'completed' };
    });
  }
}

function viewOf(row: RemovalRow): RemovalRequest {
  return {
    confirmation_code: row.confirmation_code,
    status: row.status,
    received_at: new Date(row.received_at).toISOString(),
    completed_at: row.completed_at ? new Date(row.completed_at).toISOString() : null,
    removed: { social_logins: row.removed_social_logins, provider_tokens: row.removed_provider_tokens, profiles: row.removed_profiles },
  };
}
