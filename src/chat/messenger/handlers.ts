/**
 * The HTTP side of the messenger channel's Pages (channel.ts): connecting a social-network Page to an
 * entity's inbox, listing an entity's Pages, disconnecting one. Every member of the entity's team lists
 * them; its owner and admins connect and disconnect them; anyone else is told a Page does not exist (404).
 */
import type { Teams } from '../../entities/teams.js';
import { callerOf } from '../../http/auth.js';
import { sendEnvelope } from '../../http/envelope.js';
import { ApiError } from '../../http/errors.js';
import type { OperationHandlers } from '../../http/operations.js';
import { pageNotFound, type MessengerChannel } from './channel.js';
import { counted } from '../../http/counted.js';

type MessengerOperations = 'listMessengerPages' | 'connectMessengerPage' | 'disconnectMessengerPage';

export interface MessengerHandlerDependencies {
  messenger: MessengerChannel;
  teams: Teams;
}

export function messengerHandlers({ messenger, teams }: MessengerHandlerDependencies): Pick<Required<OperationHandlers>, MessengerOperations> {
  return {
    async listMessengerPages(req, res) {
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const pages = await messenger.pages(entity.id);
      sendEnvelope(res, 200, pages, `${counted(pages.length, 'Page')}.`);
    },

    async connectMessengerPage(req, res) {
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      if (!messenger.canStoreTokens) {
        throw new ApiError(503, 'service_unavailable', 'This deployment has no SECRETS_KEY, so Page tokens cannot be stored.', [], { 'Retry-After': '3600' });
      }
      const { page_id: pageId, name, access_token: accessToken } = req.body;
      const connected = await messenger.connect(caller, entity.id, { pageId, name: name.trim() || name, accessToken });
      const message = connected.created ? `Page ${pageId} connected to entity ${entity.id}'s inbox.` : `Page ${pageId}'s name and token renewed in entity ${entity.id}'s inbox.`;
      sendEnvelope(res, connected.created ? 201 : 200, connected.page, message);
    },

    async disconnectMessengerPage(req, res) {
      const caller = callerOf(res);
      const page = await messenger.page(req.params.page_id);
      // A Page of an entity outside the caller's teams is not told apart from none.
      const { entity } = page ? await teams.access(caller, page.entity_id, 'manageTeam', { location: 'path', field: 'page_id' }).catch(rethrowAsPageNotFound(req.params.page_id)) : { entity: undefined };
      if (!page || !entity) throw pageNotFound(req.params.page_id);
      await messenger.disconnect(page.page_id);
      sendEnvelope(res, 200, page, `Page ${page.page_id} disconnected from entity ${entity.id}'s inbox.`);
    },
  };
}

/** A 404 of the Page's entity becomes the Page's own 404 (a 403 for a member's lesser role stays). */
function rethrowAsPageNotFound(pageId: string) {
  return (error: unknown): never => {
    if (error instanceof ApiError && error.status === 404) throw pageNotFound(pageId);
    throw error;
  };
}
