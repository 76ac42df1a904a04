/**
 * Status checks and the API root: a cheap liveness answer for any caller with a key, the backend status
 * for admins, and the root that tells a client who it is and where to go (links, the documentation and
 * the deployment's assistants). basicStatus is bound only when the app was given what it reads (StatusSources).
 */
import { callerOf, requireAdmin } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import type { OperationHandler, OperationHandlers } from '../http/operations.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { SERVICE_NAME, SERVICE_VERSION } from './service.js';
import type { RootLinkSettings } from './settings.js';
import { readStatus, type StatusSources } from './status.js';

export type RootSettings = PublicUrlSettings & RootLinkSettings;

/** The collections the root links to, by link name; the admin ones only for admins. */
const COLLECTIONS = {
  entities: '/api/entidade/',
  monitors: '/api/monitor_social/data/',
  research_bookmarks: '/api/research/get_user_research_bookmarks/',
  news_sources: '/api/news/get_requested_fonts/',
  municipalities: '/api/municipios/',
} as const;
const ADMIN_COLLECTIONS = { users: '/api/auth/account', status: '/api/controle/basic_status/' } as const;

export function controlHandlers(
  settings: RootSettings,
  catalog: MunicipalityCatalog,
  status: StatusSources | undefined,
): Pick<Required<OperationHandlers>, 'systemIsOnline' | 'getApiRoot'> & Pick<OperationHandlers, 'basicStatus'> {
  return {
    async systemIsOnline(_req, res) {
      sendEnvelope(res, 200, { online: true as const, time: new Date().toISOString() }, 'Online.');
    },

    async getApiRoot(req, res) {
      const { user } = callerOf(res);
      const base = apiBaseUrl(req, settings);
      const absolute = (paths: Record<string, string>) => Object.fromEntries(Object.entries(paths).map(([name, path]) => [name, base + path]));
      const links = {
        ...(absolute(COLLECTIONS) as Record<keyof typeof COLLECTIONS, string>),
        ...(user.is_admin ? absolute(ADMIN_COLLECTIONS) : {}),
        // The published documentation (DOCS_URL), or else this server's own page (docs/).
        documentation: settings.docsUrl ?? `${base}/docs`,
      };
      const data = {
        service: SERVICE_NAME,
        version: SERVICE_VERSION,
        user: { id: user.id, username: user.username, is_admin: Boolean(user.is_admin) },
        links,
        assistants: settings.assistants.map(({ id, name, description }) => ({ id, name, description })),
      };
      sendEnvelope(res, 200, data, `Welcome to Palanque, ${user.username}.`);
    },

    ...(status ? { basicStatus: basicStatus(status, catalog) } : {}),
  };
}

function basicStatus(sources: StatusSources, catalog: MunicipalityCatalog): OperationHandler<'basicStatus'> {
  return async (req, res) => {
    requireAdmin(callerOf(res));
    const { status, problems } = await readStatus(sources, catalog, (check, reason) => req.log.warn({ check, err: reason }, 'status check failed'));
    sendEnvelope(res, 200, status, problems.length === 0 ? 'All systems operational.' : `Degraded: ${problems.join('; ')}.`);
  };
}
