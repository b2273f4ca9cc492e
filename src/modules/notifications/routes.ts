// /v1/notifications: the signed-in person's own notifications in the workspace (API keys have
// none), and marking them read.

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ListNotificationsQuery, NotificationPage, ReadNotificationsBody, ReadResult } from './schemas.js';
import { listNotifications, markRead } from './service.js';

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
}
