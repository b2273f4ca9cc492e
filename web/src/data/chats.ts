// Chats are tickets of the chat channel: their list is the tickets' list (data/tickets.ts), asked
// again when any message arrives, so that the chat whose visitor just wrote moves to the top
// (ticket events refetch it too: lib/queries.ts applyEvent).
import { useQueryClient } from '@tanstack/react-query';
import { useLiveEvents } from '../lib/events';
import { keys } from './keys';
import { type TicketQuery, useTicketList } from './tickets';

export function useChatList(ws: string, query: TicketQuery) {
  const qc = useQueryClient();
  useLiveEvents(['message.created'], () => void qc.invalidateQueries({ queryKey: [...keys.tickets(ws), query] }));
  return useTicketList(ws, query);
}
