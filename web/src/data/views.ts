// Saved views (/v1/views): the inbox's sidebar and the settings' list share this cache.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

export const useViews = (ws: string) => useQuery({ queryKey: keys.views(ws), queryFn: () => ok(api.GET('/v1/views')) });

/** A view changed: the sidebar's list and the counts are read again. */
const changed = (ws: string) => [keys.views(ws), keys.counts(ws)];

/** Creates a view (no id) or changes one. */
export const useSaveView = (ws: string) =>
  useChange(
    ({ id, body }: { id: string | null; body: Body<'/v1/views', 'post'> & Body<'/v1/views/{id}', 'patch'> }) =>
      id ? ok(api.PATCH('/v1/views/{id}', { params: { path: { id } }, body })) : ok(api.POST('/v1/views', { body })),
    changed(ws),
  );

export const useDeleteView = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/views/{id}', { params: { path: { id } } })), changed(ws));
