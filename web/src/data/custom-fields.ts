// Custom fields of tickets, contacts and companies.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
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
