// Reports: the overview of a date range (GET /v1/reports/overview). The previous range's numbers
// stay on screen while the next range's are asked (no empty flash between presets).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

const load = (from: string, to?: string) =>
  ok(api.GET('/v1/reports/overview', { params: { query: { from, ...(to ? { to } : {}) } } }));

export type Overview = Awaited<ReturnType<typeof load>>;

export const useReport = (ws: string, range: { from: string; to?: string }, enabled: boolean) =>
  useQuery({
    queryKey: keys.reports(ws, range.from, range.to ?? ''),
    queryFn: () => load(range.from, range.to),
    enabled,
    placeholderData: (prev) => prev,
  });
