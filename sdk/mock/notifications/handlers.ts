/**
 * Each user's in-app notifications in the stateful mock (src/notifications/notifications.ts): written by
 * the domains through `notify` (an invitation received), listed newest first with the unread count, and
 * marked read once (a second mark keeps the first time).
 */
import type { HttpHandler } from 'msw';
import { envelope, notFound } from '../answers.js';
import type { On } from '../auth.js';
import { pageOf } from '../paging.js';
import { newId, now, type State, type StoredNotification, type User } from '../store.js';

const NOTIFICATIONS_PER_PAGE = 30;

export function notify(state: State, userId: number, notice: Omit<StoredNotification, 'id' | 'user_id' | 'created_at' | 'read_at'>): void {
  state.notifications.push({ id: newId(state, state.notifications.map((row) => row.id)), user_id: userId, ...notice, created_at: now(), read_at: null });
}

export function notificationHandlers(on: On): HttpHandler[] {
  const view = ({ user_id: _user, ...notification }: StoredNotification) => notification;
  const mine = (state: State, user: User) => state.notifications.filter((row) => row.user_id === user.id);
  const unreadOf = (state: State, user: User) => mine(state, user).filter((row) => row.read_at === null).length;
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return [
    on('listNotifications', ({ url, state, user, base }) => {
      const unreadOnly = url.searchParams.get('unread_only') === 'true';
      const found = mine(state, user).filter((row) => !unreadOnly || row.read_at === null).reverse();
      const listUrl = new URL(`${base}/api/notifications/`);
      if (unreadOnly) listUrl.searchParams.set('unread_only', 'true');
      const paged = pageOf(found.map(view), Number(url.searchParams.get('page') ?? 1), NOTIFICATIONS_PER_PAGE, listUrl);
      if (paged instanceof Response) return paged;
      const unread = unreadOf(state, user);
      return envelope(200, { ...paged, unread }, `${plural(found.length, 'notification')}, ${unread} unread.`);
    }),
    on('countUnreadNotifications', ({ state, user }) => {
      const unread = unreadOf(state, user);
      return envelope(200, { unread }, `${plural(unread, 'unread notification')}.`);
    }),
    on('markNotificationRead', ({ url, state, user }) => {
      const id = Number(url.pathname.split('/').filter(Boolean)[2]);
      const row = mine(state, user).find((candidate) => candidate.id === id);
      if (!row) return notFound(`You have no notification ${id}.`, [{ location: 'path', field: 'notification_id', rule: 'yours', message: 'must be one of your notifications', value: id }]);
      row.read_at ??= now();
      return envelope(200, view(row), `Notification ${id} read.`);
    }),
    on('markAllNotificationsRead', ({ state, user }) => {
      const unread = mine(state, user).filter((row) => row.read_at === null);
      for (const row of unread) row.read_at = now();
      return envelope(200, { marked: unread.length, unread: 0 }, `${plural(unread.length, 'notification')} marked read.`);
    }),
  ];
}
