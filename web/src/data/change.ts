// What the resources' hooks share: a request body's type from the OpenAPI types, a mutation that
// refetches what it changed, and a query refetched when another person changes it (a live event).
import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { useLiveEvents } from '../lib/events';

type JsonBody<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body of `method` on `path` (api.gen.d.ts). */
export type Body<P extends keyof paths, M extends keyof paths[P]> = JsonBody<paths[P][M]>;

/**
 * When a change refetches what it changed: once it succeeded ('success', mutateAsync resolving
 * after the refetch, so a dialog closes onto the list as it is now); once it ended either way
 * ('always': a reorder that half failed shows the order the server kept); or begun on success
 * without waiting ('background': the screen says "Saved" first, as the page is read again).
 */
export type Refetch = 'success' | 'always' | 'background';

/** A mutation that refetches `refetch` (each key given) as `when` says. */
export function useChange<V, R>(
  mutationFn: (v: V) => Promise<R>,
  refetch: readonly QueryKey[],
  when: Refetch = 'success',
) {
  const qc = useQueryClient();
  const after = () => Promise.all(refetch.map((queryKey) => qc.invalidateQueries({ queryKey })));
  return useMutation({
    mutationFn,
    ...(when === 'always'
      ? { onSettled: after }
      : when === 'background'
        ? { onSuccess: () => void after() }
        : { onSuccess: after }),
  });
}

/** Refetches `queryKey` when one of the live event types lands (another admin's change). */
export function useLiveRefresh(types: readonly string[], queryKey: QueryKey): void {
  const qc = useQueryClient();
  useLiveEvents(types, () => void qc.invalidateQueries({ queryKey }));
}
