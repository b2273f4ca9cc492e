// Assignment (/v1/assignment): who gets new tickets: the mode, per-mailbox and per-team rules, auto-away.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

export const useAssignment = (ws: string) =>
  useQuery({ queryKey: keys.assignment(ws), queryFn: () => ok(api.GET('/v1/assignment')) });

/** Saves the settings; the cache holds the answer (no refetch). */
export function useSaveAssignment(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: Body<'/v1/assignment', 'patch'>) => ok(api.PATCH('/v1/assignment', { body })),
    onSuccess: (next) => qc.setQueryData(keys.assignment(ws), next),
  });
}
