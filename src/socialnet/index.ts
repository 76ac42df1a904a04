/** The social-network domain: its webhook (handshake and event deliveries, seen once) and its data-removal requests. */
import type { Sequelize } from 'sequelize';
import type { AccountModels } from '../accounts/models.js';
import type { EntityModels } from '../entities/models.js';
import type { JobQueue } from '../jobs/index.js';
import { SeenDeliveries } from './deliveries.js';
import { SocialnetRemovals } from './removals.js';

export { socialnetHandlers, socialnetSignatureChecks } from './handlers.js';

export function createSocialnetRemovals(sequelize: Sequelize, dependencies: { accounts: AccountModels; entities: EntityModels; jobs: JobQueue }): SocialnetRemovals {
  return new SocialnetRemovals(sequelize, dependencies);
}

export function createSeenDeliveries(sequelize: Sequelize): SeenDeliveries {
  return new SeenDeliveries(sequelize);
}
