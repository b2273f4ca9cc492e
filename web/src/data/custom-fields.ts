// Custom fields of tickets, contacts and companies: /v1/custom-fields.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';
import { DEFINITIONS } from './pages';

/** The custom fields in use (archived ones left out). */
export const useCustomFields = (ws: string) =>
  useQuery({
    queryKey: keys.fields(ws),
    queryFn: async () =>
      (await ok(api.GET('/v1/custom-fields', { params: { query: { archived: 'false' } } }))).data.filter(
        (f) => !f.archived,
      ),
    ...DEFINITIONS,
  });

/** Settings: every field, archived ones too, as the API pages them. */
export const useConfigFields = (ws: string) =>
  useQuery({
    queryKey: keys.configFields(ws),
    queryFn: () => ok(api.GET('/v1/custom-fields', { params: { query: { archived: 'any' } } })),
  });

export const useCreateField = (ws: string) =>
  useChange(
    (body: Body<'/v1/custom-fields', 'post'>) => ok(api.POST('/v1/custom-fields', { body })),
    [keys.configFields(ws)],
  );

export const useUpdateField = (ws: string) =>
  useChange(
    ({ id, body }: { id: string; body: Body<'/v1/custom-fields/{id}', 'patch'> }) =>
      ok(api.PATCH('/v1/custom-fields/{id}', { params: { path: { id } }, body })),
    [keys.configFields(ws)],
  );

export const useDeleteField = (ws: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/custom-fields/{id}', { params: { path: { id } } })),
    [keys.configFields(ws)],
  );

/** One entity's fields in the new order; the list is refetched whether it worked or not. */
export const useReorderFields = (ws: string) =>
  useChange(
    (body: Body<'/v1/custom-fields/reorder', 'post'>) => ok(api.POST('/v1/custom-fields/reorder', { body })),
    [keys.configFields(ws)],
    'always',
  );
