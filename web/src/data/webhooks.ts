// Webhooks (/v1/webhooks): the endpoints, one endpoint, its signing secret, its test event, and
// its delivery log (no live events: read again every few seconds while open).
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

export const useWebhooks = (ws: string) =>
  useQuery({
    queryKey: keys.webhooks(ws),
    queryFn: () => ok(api.GET('/v1/webhooks', { params: { query: { limit: 100 } } })),
  });

export const useWebhook = (ws: string, id: string) =>
  useQuery({
    queryKey: keys.webhook(ws, id),
    queryFn: () => ok(api.GET('/v1/webhooks/{id}', { params: { path: { id } } })),
  });

export const useCreateWebhook = (ws: string) =>
  useChange((body: Body<'/v1/webhooks', 'post'>) => ok(api.POST('/v1/webhooks', { body })), [keys.webhooks(ws)]);

export const useUpdateWebhook = (ws: string, id: string) =>
  useChange(
    (body: Body<'/v1/webhooks/{id}', 'patch'>) =>
      ok(api.PATCH('/v1/webhooks/{id}', { params: { path: { id } }, body })),
    [keys.webhooks(ws), keys.webhook(ws, id)],
    'background',
  );

export const useDeleteWebhook = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/webhooks/{id}', { params: { path: { id } } })), [keys.webhooks(ws)]);

/** Sends a webhook.test event; the delivery log is read again. */
export const useTestWebhook = (ws: string, id: string) =>
  useChange(
    () => ok(api.POST('/v1/webhooks/{id}/test', { params: { path: { id } } })),
    [keys.webhookDeliveries(ws, id)],
  );

/** A new signing secret (shown once), the old one signing beside it for `previous_secret_hours`. */
export const useRotateWebhookSecret = (ws: string, id: string) =>
  useChange(
    (body: Body<'/v1/webhooks/{id}/rotate-secret', 'post'>) =>
      ok(api.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, body })),
    [keys.webhook(ws, id)],
  );

/** The deliveries, newest first, 25 a page, read again every 3 seconds. */
export const useDeliveries = (ws: string, id: string) =>
  useInfiniteQuery({
    queryKey: keys.webhookDeliveries(ws, id),
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/v1/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 25, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 3000,
  });

/** One delivery's body, fetched when it is opened (it never changes). */
export const useDelivery = (ws: string, hook: string, delivery: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.webhookDelivery(ws, delivery),
    queryFn: () =>
      ok(
        api.GET('/v1/webhooks/{id}/deliveries/{delivery_id}', {
          params: { path: { id: hook, delivery_id: delivery } },
        }),
      ),
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
  });

export const useRedeliver = (ws: string, hook: string) =>
  useChange(
    (delivery: string) =>
      ok(
        api.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { id: hook, delivery_id: delivery } },
        }),
      ),
    [keys.webhookDeliveries(ws, hook)],
  );
