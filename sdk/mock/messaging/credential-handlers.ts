/**
 * SMS credentials in the stateful mock: those of the caller's teams (all for a platform admin), and a
 * new one, added by platform admins only, one per account and sender. Their names and footers change
 * through compliance-handlers.ts.
 */
import type { HttpHandler } from 'msw';
import type { ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, forbidden, invalidBody, notFound } from '../answers.js';
import type { On } from '../auth.js';
import { newId, now } from '../store.js';
import { footerOf } from './compliance.js';

export function smsHandlers(on: On): HttpHandler[] {
  return [
    on('listSmsCredentials', ({ user, state }) => {
      const usable = [...state.credentials.values()].filter((credential) => {
        if (user.is_admin) return true;
        const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
        return entity !== undefined && entity.members.some((member) => member.user_id === user.id);
      });
      return envelope(200, usable, `${usable.length} credential${usable.length === 1 ? '' : 's'}.`);
    }),
    on('createSmsCredential', ({ body, user, state }) => {
      if (!user.is_admin) return forbidden('Only platform administrators may do this.');
      const name = String(body.name ?? '').trim();
      const senderId = String(body.sender_id ?? '').replace(/[\s().-]/g, '');
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      if (!/^\+?\d{10,15}$/.test(senderId)) problems.push({ location: 'body', field: 'sender_id', rule: 'phone_number', message: 'must be a valid phone number', value: String(body.sender_id) });
      const footer = footerOf(body.footer);
      if ('problem' in footer) problems.push(footer.problem);
      if (problems.length > 0 || 'problem' in footer) return invalidBody(problems);
      const sender = senderId.startsWith('+') ? senderId : `+55${senderId}`;
      const entityId = body.entity_id === undefined ? null : Number(body.entity_id);
      if (entityId !== null && !state.entities.has(entityId)) return notFound(`There is no entity ${entityId}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: entityId }]);
      if ([...state.credentials.values()].some((credential) => credential.account_id === body.account_id && credential.sender_id === sender)) {
        return conflict('A credential with this account and sender already exists.', [{ location: 'body', field: 'sender_id', rule: 'unique_per_account', message: 'already has a credential on this account', value: sender }]);
      }
      const id = newId(state, state.credentials.keys());
      const credential = { id, name, provider: 'provider', account_id: String(body.account_id), sender_id: sender, entity_id: entityId, footer: footer.footer, created_at: now() };
      state.credentials.set(id, credential);
      return envelope(201, credential, `Credential ${id} added.`);
    }),
  ];
}
