// Labels (the API's tags) and their groups: /v1/tags, /v1/tag-groups.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';
import { DEFINITIONS } from './pages';

export const useTags = (ws: string) =>
  useQuery({
    queryKey: keys.tags(ws),
    queryFn: async () => (await ok(api.GET('/v1/tags', { params: { query: { archived: 'false' } } }))).data,
    ...DEFINITIONS,
  });

export const useTagGroups = (ws: string) =>
  useQuery({
    queryKey: keys.tagGroups(ws),
    queryFn: async () => (await ok(api.GET('/v1/tag-groups'))).data,
    ...DEFINITIONS,
  });

// Settings: every label (archived ones too) and group, as the API pages them.

export const useConfigTags = (ws: string) =>
  useQuery({ queryKey: keys.configTags(ws), queryFn: () => ok(api.GET('/v1/tags')) });

export const useConfigTagGroups = (ws: string) =>
  useQuery({ queryKey: keys.configTagGroups(ws), queryFn: () => ok(api.GET('/v1/tag-groups')) });

type TagPatch = Body<'/v1/tags/{id}', 'patch'>;
type GroupPatch = Body<'/v1/tag-groups/{id}', 'patch'>;

/** Creates a label (no id) or changes one. */
export const useSaveTag = (ws: string) =>
  useChange(
    ({ id, body }: { id: string | null; body: TagPatch & Body<'/v1/tags', 'post'> }) =>
      id ? ok(api.PATCH('/v1/tags/{id}', { params: { path: { id } }, body })) : ok(api.POST('/v1/tags', { body })),
    [keys.config(ws)],
  );

export const useDeleteTag = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/tags/{id}', { params: { path: { id } } })), [keys.config(ws)]);

export const useMergeTag = (ws: string) =>
  useChange(
    ({ id, into }: { id: string; into: string }) =>
      ok(api.POST('/v1/tags/{id}/merge', { params: { path: { id } }, body: { into } })),
    [keys.config(ws)],
  );

/** Every label's id in the new order; the lists are refetched whether it worked or not. */
export const useReorderTags = (ws: string) =>
  useChange((ids: string[]) => ok(api.POST('/v1/tags/reorder', { body: { ids } })), [keys.config(ws)], 'always');

/** Creates a label group (no id) or changes one. */
export const useSaveTagGroup = (ws: string) =>
  useChange(
    ({ id, body }: { id: string | null; body: GroupPatch & Body<'/v1/tag-groups', 'post'> }) =>
      id
        ? ok(api.PATCH('/v1/tag-groups/{id}', { params: { path: { id } }, body }))
        : ok(api.POST('/v1/tag-groups', { body })),
    [keys.config(ws)],
  );

export const useDeleteTagGroup = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/tag-groups/{id}', { params: { path: { id } } })), [keys.config(ws)]);

export const useReorderTagGroups = (ws: string) =>
  useChange((ids: string[]) => ok(api.POST('/v1/tag-groups/reorder', { body: { ids } })), [keys.config(ws)], 'always');
