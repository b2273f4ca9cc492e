// The ticket page's triage (docs/app.md "Triage"), below the AI panel: the suggestions triage left
// on the ticket (custom.ai_suggestions: priority, severity, labels, team, spam), each with its
// value, its confidence and the model that decided; Accept sets the field (PATCH, which removes
// the suggestion), Dismiss removes it (DELETE .../ai/suggestions/{field}). They follow
// ticket.updated, so another agent's accept or a new run shows at once. Triage (Shift+T) runs the
// workspace's engine on the ticket. Keyboard: Shift+T runs triage and then puts the focus on the
// first suggestion; in the list, ↑/↓ move between suggestions, y accepts and x dismisses the one
// with the focus (Enter on a button does what it says).
import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { aiErrorText } from '../../data/ai';
import { useTeams } from '../../data/teams';
import {
  PRIORITY_NAME,
  percent,
  SEVERITY_NAME,
  type Suggestion,
  type SuggestionField,
  suggestionsOf,
  useAcceptSuggestion,
  useDismissSuggestion,
  useRunTriage,
  useTriageSettings,
} from '../../data/triage';
import type { Ticket } from '../../lib/api';
import { errorText } from '../../lib/api';
import { useShortcuts } from '../../lib/keys';
import { Icon } from '../../ui/icons';
import './ai.css';

const FIELD_NAME: Record<SuggestionField, string> = {
  priority: 'Priority',
  severity: 'Severity',
  labels: 'Labels',
  team: 'Team',
  spam: 'Spam',
};

/** A suggestion's value in words (a team by its name, labels joined). */
function useValueText(ws: string) {
  const teams = useTeams(ws).data ?? [];
  return (field: SuggestionField, s: Suggestion): string => {
    const v = s.value;
    switch (field) {
      case 'priority':
        return PRIORITY_NAME[String(v)] ?? String(v);
      case 'severity':
        return SEVERITY_NAME[String(v)] ?? String(v);
      case 'labels':
        return Array.isArray(v) ? v.join(', ') : String(v);
      case 'team':
        return teams.find((t) => t.id === v)?.name ?? 'a team';
      case 'spam':
        return 'Mark as spam';
    }
  };
}

export function TriagePanel({ ws, ticket, readOnly }: { ws: string; ticket: Ticket; readOnly: boolean }) {
  const settings = useTriageSettings(ws);
  // An engine configured is enough to run it: `available` stays false until this process has
  // reached a language model once, which only a run does.
  const available = (settings.data?.engine.provider ?? 'none') !== 'none';
  const suggestions = suggestionsOf(ticket);
  const run = useRunTriage(ws);
  const accept = useAcceptSuggestion(ws);
  const dismiss = useDismissSuggestion(ws);
  const valueText = useValueText(ws);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState('');
  const list = useRef<HTMLUListElement>(null);
  const [focusFirst, setFocusFirst] = useState(false);

  const triage = async () => {
    if (run.isPending || readOnly || !available) return;
    setError(null);
    setSaid('');
    try {
      const r = await run.mutateAsync({ ticket });
      const n = Object.keys(r.suggestions).length;
      setSaid(
        `Triage done: ${r.applied.length === 0 ? 'nothing applied' : `${r.applied.length} applied`}, ${n} ${n === 1 ? 'suggestion' : 'suggestions'}.`,
      );
      setFocusFirst(n > 0);
    } catch (err) {
      setError(aiErrorText(err));
    }
  };
  useShortcuts({ T: () => void triage() }, available && !readOnly);

  // After a run, the first suggestion has the focus once the ticket shows it (ticket.updated may
  // bring it before or after the run's answer).
  const firstField = suggestions[0]?.[0];
  useEffect(() => {
    if (!focusFirst || !firstField) return;
    setFocusFirst(false);
    list.current?.querySelector<HTMLButtonElement>('button[data-accept]')?.focus();
  }, [focusFirst, firstField]);

  const act = async (what: 'accept' | 'dismiss', field: SuggestionField, s: Suggestion) => {
    if (readOnly) return;
    setError(null);
    const text = `${FIELD_NAME[field]}: ${valueText(field, s)}`;
    try {
      if (what === 'accept') await accept.mutateAsync({ ticket, field, s });
      else await dismiss.mutateAsync({ ticket, field });
      setSaid(what === 'accept' ? `Accepted ${text}.` : `Dismissed ${text}.`);
    } catch (err) {
      setError(`Could not ${what} the suggestion: ${errorText(err)}`);
    }
  };

  // ↑/↓ between rows (the Accept button of each, or Dismiss where it had the focus); y and x act.
  const onListKey = (e: KeyboardEvent<HTMLUListElement>) => {
    const row = (e.target as HTMLElement).closest('li');
    if (!row || !list.current) return;
    const rows = [...list.current.querySelectorAll<HTMLLIElement>('li')];
    const i = rows.indexOf(row);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const next = rows[e.key === 'ArrowDown' ? Math.min(i + 1, rows.length - 1) : Math.max(i - 1, 0)];
      const kind = (e.target as HTMLElement).hasAttribute('data-dismiss') ? 'data-dismiss' : 'data-accept';
      next?.querySelector<HTMLButtonElement>(`button[${kind}]`)?.focus();
      e.preventDefault();
      return;
    }
    if (e.key !== 'y' && e.key !== 'x') return;
    const entry = suggestions[i];
    if (!entry) return;
    e.preventDefault();
    e.stopPropagation();
    // The focus goes to the row that takes this one's place (or the list's heading's button).
    const stay = rows[i + 1] ?? rows[i - 1];
    stay?.querySelector<HTMLButtonElement>('button[data-accept]')?.focus();
    void act(e.key === 'y' ? 'accept' : 'dismiss', entry[0], entry[1]);
  };

  if (!available && suggestions.length === 0) return null;
  return (
    <section className="side-section ai-triage" aria-labelledby="ai-triage-title">
      <h2 id="ai-triage-title">
        <Icon name="ai" /> Triage
      </h2>
      {suggestions.length > 0 ? (
        <>
          <p className="hint" id="ai-suggestions-hint">
            Suggested by AI{readOnly ? '.' : ': y accepts, x dismisses the one with the focus; ↑/↓ move.'}
          </p>
          <ul
            className="ai-suggestions"
            aria-label="AI suggestions"
            aria-describedby="ai-suggestions-hint"
            ref={list}
            onKeyDown={onListKey}
          >
            {suggestions.map(([field, s]) => {
              const text = valueText(field, s);
              return (
                <li key={field} className="ai-suggestion">
                  <span className="ai-suggestion-field">{FIELD_NAME[field]}</span>{' '}
                  <strong className="ai-suggestion-value">{text}</strong>{' '}
                  <span className="ai-suggestion-meta">
                    {s.confidence !== null ? (
                      <span className="ai-confidence" title="How sure the engine is">
                        {percent(s.confidence)}
                      </span>
                    ) : (
                      <span className="ai-confidence">language model</span>
                    )}{' '}
                    · {s.model}
                  </span>
                  {!readOnly && (
                    <span className="ai-suggestion-actions">
                      <button
                        type="button"
                        className="button small"
                        data-accept=""
                        onClick={() => void act('accept', field, s)}
                      >
                        Accept
                        <span className="visually-hidden">
                          {' '}
                          {FIELD_NAME[field].toLowerCase()}: {text}
                        </span>
                      </button>
                      <button
                        type="button"
                        className="button small"
                        data-dismiss=""
                        onClick={() => void act('dismiss', field, s)}
                      >
                        Dismiss
                        <span className="visually-hidden">
                          {' '}
                          {FIELD_NAME[field].toLowerCase()}: {text}
                        </span>
                      </button>
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
        </>
      ) : (
        <p className="hint">No suggestions.</p>
      )}
      {available && !readOnly && (
        <div className="ai-actions">
          {run.isPending ? (
            <span role="status">Triaging…</span>
          ) : (
            <button type="button" className="button small" onClick={() => void triage()}>
              <Icon name="ai" />
              Triage <kbd>Shift+T</kbd>
            </button>
          )}
        </div>
      )}
      <p className="visually-hidden" role="status">
        {said}
      </p>
      <p className="error" role="alert" hidden={!error}>
        {error}
      </p>
    </section>
  );
}
