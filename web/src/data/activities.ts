// A ticket's activities: what changed and who changed it, between its messages in the thread.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useActivities = (ws: string, ticketId: string) =>
  useQuery({
    queryKey: keys.activities(ws, ticketId),
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets/{id}/activities', { params: { path: { id: ticketId } } }))).data,
  });
