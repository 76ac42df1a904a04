/** The entities domain, assembled from a database: models, the team rules, the entity store, the guardianship links and the edit history. */
import type { Sequelize } from 'sequelize';
import type { AuditLog } from '../accounts/audit-log.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import { GuardianshipLinks } from './guardianship.js';
import { DEFAULT_HISTORY_RETENTION_MS, EditHistory } from './history.js';
import { defineEntityModels, type EntityModels } from './models.js';
import { DEFAULT_INVITATION_SETTINGS, TeamInvitations, type InvitationSettings } from './invitations.js';
import { EntityStore } from './store.js';
import { Teams } from './teams.js';

export interface Entities {
  models: EntityModels;
  teams: Teams;
  store: EntityStore;
  guardianship: GuardianshipLinks;
  /** Every change to an entity, its team, monitors and SMS credentials (history.ts); `record` writes one. */
  history: EditHistory;
  /** Invitations to teams, answered by the invitees (invitations.ts). */
  invitations: TeamInvitations;
}

export interface EntitySettings {
  /** How long the edit history is kept (HISTORY_RETENTION_DAYS; five years by default). */
  historyRetentionMs?: number;
  /** Invitations' lifetime and how many an entity may have open (INVITATION_LIFETIME_DAYS, TEAM_MAX_OPEN_INVITATIONS). */
  invitations?: InvitationSettings;
}

/** What the entities domain uses of the accounts: the mail, for invitations, and the audit log. */
export interface EntityServices {
  mailer: Mailer;
  logger: Logger;
  audit?: AuditLog;
}

export function createEntities(sequelize: Sequelize, settings: EntitySettings, { mailer, logger, audit }: EntityServices): Entities {
  const models = defineEntityModels(sequelize);
  const history = new EditHistory(sequelize, settings.historyRetentionMs ?? DEFAULT_HISTORY_RETENTION_MS);
  return {
    models,
    teams: new Teams(models),
    store: new EntityStore(models),
    guardianship: new GuardianshipLinks(models),
    invitations: new TeamInvitations(models, mailer, logger, settings.invitations ?? DEFAULT_INVITATION_SETTINGS, history, audit),
    history,
  };
}
