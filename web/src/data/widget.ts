// The chat widget's settings (/v1/widget/settings) and its identity-verification secret
// (/v1/workspace/widget-secret/rotate: shown once).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

export const useWidgetSettings = (ws: string, enabled: boolean) =>
  useQuery({ queryKey: keys.widgetSettings(ws), queryFn: () => ok(api.GET('/v1/widget/settings')), enabled });

/** Saves the settings; the cache holds the answer (no refetch). */
export function useSaveWidgetSettings(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: Body<'/v1/widget/settings', 'patch'>) => ok(api.PATCH('/v1/widget/settings', { body })),
    onSuccess: (next) => qc.setQueryData(keys.widgetSettings(ws), next),
  });
}

export const useRotateWidgetSecret = () =>
  useMutation({ mutationFn: () => ok(api.POST('/v1/workspace/widget-secret/rotate')) });
