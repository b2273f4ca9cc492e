// The decisions' trail in the thread (docs/app.md "Triage"): an activity whose actor is the AI
// (actor type `ai`; data via, model, confidence) read as a sentence with what decided it:
// "Triage set priority to High (92 %) · dedicated-linear-v1". `via` says whether a triage run or an
// automation's ai_triage action made the change; a language model's decision has no confidence.
import { useTeams } from '../../data/teams';
import { PRIORITY_NAME, percent, SEVERITY_NAME } from '../../data/triage';
import type { Activity } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { when } from '../../lib/format';

/** The sentence of an AI activity; `teamName` names a team by its id. */
export function aiActivityText(a: Activity, teamName: (id: string) => string | null): string {
  const d = (a.data ?? {}) as Record<string, unknown>;
  const by = d.via === 'automation' ? 'Triage (automation)' : 'Triage';
  const to = d.to;
  switch (a.type) {
    case 'priority_changed':
      return `${by} set priority to ${PRIORITY_NAME[String(to)] ?? String(to)}`;
    case 'severity_changed':
      return to ? `${by} set severity to ${SEVERITY_NAME[String(to)] ?? String(to)}` : `${by} cleared the severity`;
    case 'team_changed':
      return to ? `${by} set team to ${teamName(String(to)) ?? 'a team'}` : `${by} removed the team`;
    case 'tagged':
      return `${by} added the label ${(d.tag as { name?: string } | undefined)?.name ?? ''}`;
    case 'untagged':
      return `${by} removed the label ${(d.tag as { name?: string } | undefined)?.name ?? ''}`;
    case 'assigned':
      return to ? `${by} assigned the ticket` : `${by} unassigned the ticket`;
    case 'status_changed':
      return `${by} changed the status to ${String(to)}`;
    default:
      return `${by}: ${a.type.replaceAll('_', ' ')}`;
  }
}

/** What decided it: "(92 %) · model", or "· model" for a language model's decision. */
export function aiDecidedBy(a: Activity): string {
  const d = (a.data ?? {}) as Record<string, unknown>;
  const confidence = typeof d.confidence === 'number' ? ` (${percent(d.confidence)})` : '';
  const model = typeof d.model === 'string' && d.model ? ` · ${d.model}` : '';
  return `${confidence}${model}`;
}

export function AiActivityItem({ a }: { a: Activity }) {
  const ws = useWorkspace();
  const teams = useTeams(ws).data ?? [];
  const name = (id: string) => teams.find((t) => t.id === id)?.name ?? null;
  return (
    <li className="activity activity-ai">
      <span className="ai-mark">AI</span> {aiActivityText(a, name)}
      {aiDecidedBy(a)} · <time dateTime={a.created_at}>{when(a.created_at)}</time>
    </li>
  );
}
