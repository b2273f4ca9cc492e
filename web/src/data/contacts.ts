// Contacts: the customer panel beside a ticket (the contact and their other tickets).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useContact = (ws: string, id: string) =>
  useQuery({
    queryKey: keys.contact(ws, id),
    queryFn: () => ok(api.GET('/v1/contacts/{id}', { params: { path: { id } } })),
  });

/** The contact as already loaded (the customer panel's copy), without asking: for a placeholder's value. */
export function useLoadedContact(ws: string) {
  const qc = useQueryClient();
  return (id: string) => qc.getQueryData<{ company?: { name?: string } | null }>(keys.contact(ws, id));
}

/** The contact's latest tickets; `version` (the open ticket's updated_at) asks again when it changes. */
export const useContactTickets = (ws: string, id: string, version: string) =>
  useQuery({
    queryKey: [...keys.contactTickets(ws, id), version],
    queryFn: async () =>
      (await ok(api.GET('/v1/contacts/{id}/tickets', { params: { path: { id }, query: { limit: 10 } } }))).data,
  });
