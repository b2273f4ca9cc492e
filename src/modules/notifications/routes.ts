// /v1/notifications: the signed-in person's own notifications in the workspace (API keys have
// none), marking them read, and the types they chose not to be told about (settings).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import {
  ListNotificationsQuery,
  NotificationPage,
  NotificationSettings,
  PatchNotificationSettingsBody,
  ReadNotificationsBody,
  ReadResult,
} from './schemas.js';
import {
  listNotifications,
  markRead,
  type NotificationType,
  notificationSettings,
  setNotificationSettings,
} from './service.js';

export default async function notificationRoutes(app: App, deps: Deps) {
  const tags = ['notifications'];
  const own = access.usersOnly('viewer');

  app.get(
    '/v1/notifications',
    {
      config: { access: own },
      schema: {
        tags,
        summary: 'Your notifications: newest first, or unread first (sort=unread_first); unread=true for unread only',
        querystring: ListNotificationsQuery,
        response: { 200: NotificationPage },
      },
    },
    async (req) => listNotifications(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/notifications/read',
    {
      config: { access: own, idempotent: false },
      schema: {
        tags,
        summary: 'Mark your notifications read: ids (up to 100), or all: true',
        body: ReadNotificationsBody,
        response: { 200: ReadResult },
      },
    },
    async (req) => markRead(deps, req.ctx, req.body),
  );

  app.get(
    '/v1/notifications/settings',
    {
      config: { access: own },
      schema: {
        tags,
        summary: 'Your notification choices in this workspace: the types you are not told about',
        response: { 200: NotificationSettings },
      },
    },
    async (req) => notificationSettings(deps, req.ctx),
  );

  app.patch(
    '/v1/notifications/settings',
    {
      config: { access: own },
      schema: {
        tags,
        summary: 'Change your notification choices in this workspace (muted replaces the list)',
        description:
          'A muted type creates no notification for you in this workspace from now on (nor its ' +
          'notification.created event); notifications you already have stay. Other workspaces keep their own ' +
          'choices. An addition to the contract.',
        body: PatchNotificationSettingsBody,
        response: { 200: NotificationSettings },
      },
    },
    // The schema checked each type against the catalog.
    async (req) => setNotificationSettings(deps, req.ctx, req.body as { muted: NotificationType[] }),
  );
}
