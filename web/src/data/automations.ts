// Automations (/v1/automations): the rules in run order, one rule, and their changes.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

export const useAutomations = (ws: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.automations(ws),
    queryFn: () => ok(api.GET('/v1/automations', { params: { query: { limit: 100 } } })),
    enabled,
  });

export const useAutomation = (ws: string, id: string | null, enabled: boolean) =>
  useQuery({
    queryKey: keys.automation(ws, id),
    queryFn: () => ok(api.GET('/v1/automations/{id}', { params: { path: { id: id! } } })),
    enabled: enabled && id !== null,
  });

/** Creates an automation (no id) or changes it; the list and its page are read again. */
export const useSaveAutomation = (ws: string, id: string | null) =>
  useChange(
    (body: Body<'/v1/automations', 'post'>) =>
      id
        ? ok(api.PATCH('/v1/automations/{id}', { params: { path: { id } }, body }))
        : ok(api.POST('/v1/automations', { body })),
    [keys.automations(ws), keys.automation(ws, id)],
  );

/** Switches one on or off; the list is read again whatever the answer. */
export const useEnableAutomation = (ws: string) =>
  useChange(
    ({ id, enabled }: { id: string; enabled: boolean }) =>
      ok(api.PATCH('/v1/automations/{id}', { params: { path: { id } }, body: { enabled } })),
    [keys.automations(ws)],
    'always',
  );

/** New positions for some automations (a swap), sent one after another; then the list is read again. */
export const useMoveAutomations = (ws: string) =>
  useChange(
    async (moves: Array<{ id: string; position: number }>) => {
      for (const { id, position } of moves)
        await ok(api.PATCH('/v1/automations/{id}', { params: { path: { id } }, body: { position } }));
    },
    [keys.automations(ws)],
    'always',
  );

export const useDeleteAutomation = (ws: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/automations/{id}', { params: { path: { id } } })),
    [keys.automations(ws)],
  );
