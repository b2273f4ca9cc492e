// The ticket page's "Similar tickets" (docs/app.md "Similar tickets and semantic matches"), below
// triage: up to five other tickets GET /v1/ai/search finds for the ticket's subject and first
// message (cut to 500 characters), best first, each a link to it with its status. Hidden (not
// disabled) while the workspace has no semantic search (/v1/ai/config: AI off or no embeddings).
import { Link } from '@tanstack/react-router';
import { useAiSearchOn, useSimilarTickets } from '../../data/ai-search';
import { useMessages } from '../../data/messages';
import { errorText, type Ticket } from '../../lib/api';
import { STATUS_LABEL } from '../../lib/format';
import { Icon } from '../../ui/icons';
import './ai.css';

export function SimilarTickets({ ws, ticket }: { ws: string; ticket: Ticket }) {
  const on = useAiSearchOn(ws);
  const thread = useMessages(ws, ticket.id, on);
  // The first public message (the customer's, as a rule); undefined until the thread is there.
  const first = thread.data ? (thread.data.find((m) => m.kind === 'reply')?.body_text ?? null) : undefined;
  const similar = useSimilarTickets(ws, ticket, first, on);
  if (!on) return null;
  return (
    <section className="side-section ai-similar" aria-labelledby="ai-similar-title">
      <h2 id="ai-similar-title">
        <Icon name="ai" /> Similar tickets
      </h2>
      {similar.error ? (
        <p className="error" role="alert">
          Could not look for similar tickets: {errorText(similar.error)}
        </p>
      ) : similar.isPending ? (
        <p className="hint">Looking for similar tickets…</p>
      ) : similar.tickets.length === 0 ? (
        <p className="hint">No similar tickets.</p>
      ) : (
        <ol className="ai-similar-list" aria-label="Similar tickets">
          {similar.tickets.map((t) => (
            <li key={t.id}>
              <Link to="/tickets/$number" params={{ number: String(t.number) }}>
                <span className="number">#{t.number}</span> {t.subject}
              </Link>{' '}
              <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
