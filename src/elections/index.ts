/** The elections-panel sync, assembled from the configuration. */
import type { Sequelize } from 'sequelize';
import type { Entities } from '../entities/index.js';
import type { JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import { SecretBox } from '../security/secret-box.js';
import { HttpElectionsPanel } from './panel.js';
import { ElectionsPanelSyncs } from './syncs.js';

export { electionsHandlers } from './handlers.js';
export { ElectionsPanelSyncs } from './syncs.js';

export interface ElectionsSettings {
  /** SECRETS_KEY: seals the panel's credentials. */
  secretsKey: string | undefined;
  /** ELECTIONS_PANEL_URL: the elections panel's API; without it no sync can be queued. */
  electionsPanelUrl: string | undefined;
}

export function createElectionsPanelSyncs(sequelize: Sequelize, settings: ElectionsSettings, dependencies: { jobs: JobQueue; entities: Entities; logger: Logger }): ElectionsPanelSyncs {
  return new ElectionsPanelSyncs(sequelize, {
    ...dependencies,
    panel: settings.electionsPanelUrl ? new HttpElectionsPanel(settings.electionsPanelUrl) : undefined,
    box: settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined,
  });
}
