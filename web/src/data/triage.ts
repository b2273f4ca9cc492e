// AI triage (interface.md "AI" rules 4 to 6; docs/app.md "Triage"): the workspace's triage settings
// and its engine's state (GET/PATCH /v1/triage), a run on one ticket (POST
// /v1/tickets/{id}/ai/triage), and the suggestions it left on the ticket (custom.ai_suggestions):
// accepted by setting the field (PATCH /v1/tickets/{id}, which removes the suggestion) or dismissed
// (DELETE /v1/tickets/{id}/ai/suggestions/{field}). Each change comes back as ticket.updated, so
// the ticket in the cache, and the suggestions read from it, follow for everyone.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok, type Ticket } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

export type TriageSettings = paths['/v1/triage']['get']['responses'][200]['content']['application/json'];
export type TriagePatch = Body<'/v1/triage', 'patch'>;
export type TriageField = TriageSettings['fields'][number];
export type TriageTraining = NonNullable<TriageSettings['engine']['training']>;

/** GET /v1/triage (any member): settings, the engine deciding and, for the dedicated one, its training. */
export const useTriageSettings = (ws: string, enabled = true) =>
  useQuery({
    queryKey: keys.triage(ws),
    queryFn: () => ok(api.GET('/v1/triage')),
    enabled: enabled && ws !== '',
    staleTime: 30_000,
  });

/** PATCH /v1/triage (admins): any subset; the cache holds the answer. */
export function useSaveTriage(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: TriagePatch) => ok(api.PATCH('/v1/triage', { body })),
    onSuccess: (next) => qc.setQueryData(keys.triage(ws), next),
  });
}

// Suggestions

/** The five fields a suggestion can be about, in the order the ticket page lists them. */
export const SUGGESTION_FIELDS = ['priority', 'severity', 'labels', 'team', 'spam'] as const;
export type SuggestionField = (typeof SUGGESTION_FIELDS)[number];

export interface Suggestion {
  value: string | string[] | boolean;
  /** Calibrated confidence 0 to 1 (the dedicated engine); null when the language model decided. */
  confidence: number | null;
  probability: number | null;
  model: string;
  decided_at: string;
}

/** The ticket's pending suggestions (custom.ai_suggestions), in SUGGESTION_FIELDS order. */
export function suggestionsOf(t: Ticket): Array<[SuggestionField, Suggestion]> {
  const s = (t.custom as Record<string, unknown> | null | undefined)?.ai_suggestions;
  if (!s || typeof s !== 'object') return [];
  const all = s as Partial<Record<SuggestionField, Suggestion>>;
  return SUGGESTION_FIELDS.flatMap((f) => {
    const one = all[f];
    return one && typeof one === 'object' && 'value' in one ? [[f, one] as [SuggestionField, Suggestion]] : [];
  });
}

/** A probability as people read it: 0.923 → "92 %". */
export const percent = (p: number): string => `${Math.round(p * 100)} %`;

export const PRIORITY_NAME: Record<string, string> = { low: 'Low', normal: 'Normal', high: 'High', urgent: 'Urgent' };
export const SEVERITY_NAME: Record<string, string> = { sev1: 'Sev 1', sev2: 'Sev 2', sev3: 'Sev 3', sev4: 'Sev 4' };

/** What accepting a suggestion sends: the field set as suggested (which removes the suggestion). */
export function acceptBody(field: SuggestionField, s: Suggestion): Body<'/v1/tickets/{id}', 'patch'> {
  switch (field) {
    case 'priority':
      return { priority: s.value as Ticket['priority'] };
    case 'severity':
      return { severity: s.value as NonNullable<Ticket['severity']> };
    case 'labels':
      return { add_tags: Array.isArray(s.value) ? s.value : [String(s.value)] };
    case 'team':
      return { team_id: String(s.value) };
    case 'spam':
      return { spam: true };
  }
}

/** Puts the ticket the API answered into the cache (ticket.updated brings the same a moment later). */
function useKeepTicket(ws: string) {
  const qc = useQueryClient();
  return (t: Ticket) => qc.setQueryData(keys.ticket(ws, t.number), t);
}

/** Accept: PATCH the field as suggested. */
export function useAcceptSuggestion(ws: string) {
  const keep = useKeepTicket(ws);
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ ticket, field, s }: { ticket: Ticket; field: SuggestionField; s: Suggestion }) =>
      ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id: ticket.id } }, body: acceptBody(field, s) })),
    onSuccess: (t) => {
      keep(t);
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
    },
  });
}

/** Dismiss: DELETE the suggestion; the ticket is asked again (the answer is 204). */
export function useDismissSuggestion(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ ticket, field }: { ticket: Ticket; field: SuggestionField }) => {
      await ok(api.DELETE('/v1/tickets/{id}/ai/suggestions/{field}', { params: { path: { id: ticket.id, field } } }));
      return ticket;
    },
    onMutate: async ({ ticket, field }) => {
      // Gone at once; back if the API says no.
      const key = keys.ticket(ws, ticket.number);
      await qc.cancelQueries({ queryKey: key, exact: true });
      const before = qc.getQueryData<Ticket>(key);
      if (before) {
        const custom = { ...((before.custom as Record<string, unknown> | null) ?? {}) };
        const left = { ...((custom.ai_suggestions as Record<string, unknown> | null) ?? {}) };
        delete left[field];
        custom.ai_suggestions = Object.keys(left).length > 0 ? left : null;
        qc.setQueryData<Ticket>(key, { ...before, custom });
      }
      return { before };
    },
    onError: (_err, { ticket }, context) => {
      if (context?.before) qc.setQueryData(keys.ticket(ws, ticket.number), context.before);
    },
    onSettled: (_d, _e, { ticket }) => qc.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) }),
  });
}

/** POST /v1/tickets/{id}/ai/triage: a run by the workspace's engine; the ticket is asked again after. */
export function useRunTriage(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ ticket }: { ticket: Ticket }) =>
      ok(api.POST('/v1/tickets/{id}/ai/triage', { params: { path: { id: ticket.id } }, body: {} })),
    onSettled: (_d, _e, { ticket }) =>
      Promise.all([
        qc.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) }),
        qc.invalidateQueries({ queryKey: keys.activities(ws, ticket.id) }),
      ]),
  });
}
