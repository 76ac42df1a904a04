/** The entities' settings a deployment tunes: team invitations and how long the edit history is kept. */
import { z } from 'zod';
import type { InvitationSettings } from './invitations.js';

export const entitiesEnvironment = z.object({
  // How long the entities' edit history is kept (history.ts); five years, as the audit log.
  HISTORY_RETENTION_DAYS: z.coerce.number().int().min(1).max(100 * 366).default(5 * 365),
  INVITATION_LIFETIME_DAYS: z.coerce.number().int().min(1).max(90).default(7),
  TEAM_MAX_OPEN_INVITATIONS: z.coerce.number().int().min(1).max(1000).default(20),
});

type EntitiesEnvironment = z.output<typeof entitiesEnvironment>;

export function invitationSettingsOf(env: EntitiesEnvironment): InvitationSettings {
  return { lifetimeMs: env.INVITATION_LIFETIME_DAYS * 86_400_000, maxOpenPerEntity: env.TEAM_MAX_OPEN_INVITATIONS };
}

/** HISTORY_RETENTION_DAYS, in milliseconds. */
export function historyRetentionMsOf(env: EntitiesEnvironment): number {
  return env.HISTORY_RETENTION_DAYS * 86_400_000;
}
