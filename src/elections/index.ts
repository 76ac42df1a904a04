/** The elections-panel sync, assembled from the configuration. */
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.js';
import type { Entities } from '../entities/index.js';
import type { JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import { SecretBox } from '../security/secret-box.js';
import { HttpElectionsPanel } from './panel.js';
import { ElectionsPanelSyncs } from './syncs.js';

export { electionsHandlers } from './handlers.js';
export { ElectionsPanelSyncs } from './syncs.js';

export interface ElectionsSettings extends Pick<Config, 'secretsKey' | 'electionsPanelUrl'> {}

export function createElectionsPanelSyncs(sequelize: Sequelize, settings: ElectionsSettings, dependencies: { jobs: JobQueue; entities: Entities; logger: Logger }): ElectionsPanelSyncs {
  return new ElectionsPanelSyncs(sequelize, {
    ...dependencies,
    panel: settings.electionsPanelUrl ? new HttpElectionsPanel(settings.electionsPanelUrl) : undefined,
    box: settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined,
  });
}
