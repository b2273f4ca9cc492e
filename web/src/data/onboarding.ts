// The onboarding checklist (GET /v1/onboarding): the steps the person's role can do, each done as
// soon as the thing exists; hiding it (POST /v1/onboarding/dismiss) for this person.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

const load = () => ok(api.GET('/v1/onboarding'));
export type Onboarding = Awaited<ReturnType<typeof load>>;

/** Not retried: a workspace without the checklist (or the server away) just leaves it out. */
export const useOnboarding = (ws: string) => useQuery({ queryKey: keys.onboarding(ws), queryFn: load, retry: false });

/** Ask again (opening the checklist: what was done meanwhile shows as done). */
export function useRefreshOnboarding(ws: string) {
  const qc = useQueryClient();
  return () => void qc.invalidateQueries({ queryKey: keys.onboarding(ws) });
}

export function useDismissOnboarding(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.POST('/v1/onboarding/dismiss')),
    onSuccess: () => qc.setQueryData<Onboarding>(keys.onboarding(ws), (d) => (d ? { ...d, dismissed: true } : d)),
  });
}
