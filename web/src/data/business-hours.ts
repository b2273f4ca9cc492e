// Business hours (/v1/business-hours): the weekly schedule and holidays, saved as a whole.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

export const useBusinessHours = (ws: string) =>
  useQuery({ queryKey: keys.businessHours(ws), queryFn: () => ok(api.GET('/v1/business-hours')) });

/** Saves the whole schedule; the cache holds the answer (no refetch). */
export function useSaveBusinessHours(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: Body<'/v1/business-hours', 'put'>) => ok(api.PUT('/v1/business-hours', { body })),
    onSuccess: (next) => qc.setQueryData(keys.businessHours(ws), next),
  });
}
