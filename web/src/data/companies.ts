// Companies: the contact's company in the customer panel (asked only when the contact has one).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useCompany = (ws: string, id: string | null) =>
  useQuery({
    queryKey: keys.company(ws, id ?? ''),
    queryFn: () => ok(api.GET('/v1/companies/{id}', { params: { path: { id: id ?? '' } } })),
    enabled: Boolean(id),
  });
