// SLA policies (/v1/sla-policies): the targets, in the order they are tried.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

type Policy = Schemas['SlaPolicy'];

export const useSlaPolicies = (ws: string) =>
  useQuery({ queryKey: keys.slaPolicies(ws), queryFn: () => ok(api.GET('/v1/sla-policies')) });

/** Creates a policy (no id) or changes one. */
export const useSaveSlaPolicy = (ws: string) =>
  useChange(
    ({ id, body }: { id: string | null; body: Body<'/v1/sla-policies', 'post'> }) =>
      id
        ? ok(api.PATCH('/v1/sla-policies/{id}', { params: { path: { id } }, body }))
        : ok(api.POST('/v1/sla-policies', { body })),
    [keys.slaPolicies(ws)],
  );

export const useDeleteSlaPolicy = (ws: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/sla-policies/{id}', { params: { path: { id } } })),
    [keys.slaPolicies(ws)],
  );

/**
 * The policies in a new order: each whose position is not its index gets it, one after another;
 * the list is read again whether every change went through or not.
 */
export const useReorderSlaPolicies = (ws: string) =>
  useChange(
    async (order: Policy[]) => {
      for (const [position, p] of order.entries()) {
        if (p.position !== position) {
          await ok(api.PATCH('/v1/sla-policies/{id}', { params: { path: { id: p.id } }, body: { position } }));
        }
      }
    },
    [keys.slaPolicies(ws)],
    'always',
  );

/** On or off at once on screen; the list is read again after the answer, whatever it was. */
export function useEnableSlaPolicy(ws: string) {
  const qc = useQueryClient();
  const key = keys.slaPolicies(ws);
  return useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) =>
      ok(api.PATCH('/v1/sla-policies/{id}', { params: { path: { id } }, body: { enabled } })),
    onMutate: async ({ id, enabled }) => {
      // A refetch in flight would land after this and show the old switch again.
      await qc.cancelQueries({ queryKey: key, exact: true });
      qc.setQueryData<{ data: Policy[] }>(key, (old) =>
        old ? { data: old.data.map((x) => (x.id === id ? { ...x, enabled } : x)) } : old,
      );
    },
    onSettled: () => qc.invalidateQueries({ queryKey: key }),
  });
}
