// "Draft an article" on a solved or closed ticket (Shift+K), shown only while AI is on and to those
// who write articles: it opens the knowledge base's editor with an article drafted from the
// ticket's resolution (kb/ai-draft.tsx), which is saved only when the agent saves it. The ticket
// page is where an agent is when a problem was just solved, so the action is here rather than in
// the editor (which would first need the ticket picked).
import { Link, useNavigate } from '@tanstack/react-router';
import { useAiOn } from '../../data/ai';
import type { Ticket } from '../../lib/api';
import { useShortcuts } from '../../lib/keys';
import { Icon } from '../../ui/icons';

const resolved = (t: Ticket) => t.status === 'solved' || t.status === 'closed';

export function AiArticleLink({ ws, ticket, readOnly }: { ws: string; ticket: Ticket; readOnly: boolean }) {
  const navigate = useNavigate();
  const shown = useAiOn(ws) && !readOnly && resolved(ticket);
  const to = { to: '/knowledge-base/$', params: { _splat: `articles/from-ticket/${ticket.id}` } } as const;
  useShortcuts({ K: () => void navigate(to) }, shown);
  if (!shown) return null;
  return (
    <Link {...to} className="button">
      <Icon name="articleDraft" />
      Draft an article<span className="visually-hidden"> from this ticket</span> <kbd>Shift+K</kbd>
    </Link>
  );
}
