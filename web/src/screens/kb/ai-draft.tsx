// A new article drafted by AI from a solved or closed ticket (/knowledge-base/articles/from-ticket/<ticket id>,
// opened by the ticket page's "Draft an article": ticket/ai-article.tsx). The editor opens
// prefilled with the draft (POST /v1/kb/articles/ai/draft), and nothing is saved until the agent
// saves it. While it is being drafted, Escape or "Stop" goes back to the ticket, which stops the
// request. Without AI the page says so.
import { Link, useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { aiErrorText, useAiConfig, useArticleDraft } from '../../data/ai';
import { useTicketById } from '../../data/tickets';
import { useWorkspace } from '../../lib/context';
import { Loading, PageTitle } from '../../ui/page';
import { ArticleEditor } from './editor';

export function AiArticleDraft({ ticketId }: { ticketId: string }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const config = useAiConfig(ws);
  const on = config.data?.enabled === true;
  const ticket = useTicketById(ticketId);
  const draft = useArticleDraft(ws, ticketId, on);
  const number = ticket.data?.number;
  const back = () =>
    number
      ? navigate({ to: '/tickets/$number', params: { number: String(number) } })
      : navigate({ to: '/knowledge-base' });
  const drafting = on && draft.isFetching && !draft.data;
  useEffect(() => {
    if (!drafting) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      e.preventDefault();
      void back();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const from = number ? `ticket #${number}` : 'the ticket';
  if (config.data && !on) {
    return (
      <div className="screen kb">
        <PageTitle>New article</PageTitle>
        <p role="alert">AI is not available in this workspace, so an article cannot be drafted from a ticket.</p>
        <Link to="/knowledge-base/$" params={{ _splat: 'articles/new' }}>
          Write a new article
        </Link>
      </div>
    );
  }
  // The editor takes its notice once, when it opens: it waits for the ticket's number too (a draft
  // that came first would otherwise say "from the ticket" for good).
  if (draft.data && !ticket.isPending) {
    return (
      <ArticleEditor
        id={null}
        collectionId={null}
        start={{
          ...draft.data,
          notice: `Drafted by AI from ${from}: read it through. Nothing is saved until you save it.`,
        }}
      />
    );
  }
  return (
    <div className="screen kb">
      <PageTitle>New article</PageTitle>
      {draft.error || config.error ? (
        <div role="alert">
          <p className="error">
            Could not draft an article from {from}: {aiErrorText(draft.error ?? config.error)}
          </p>
          <p>
            <button type="button" className="button" onClick={() => void draft.refetch()}>
              Try again
            </button>{' '}
            <button type="button" className="button" onClick={() => void back()}>
              Back to {from}
            </button>
          </p>
        </div>
      ) : (
        <>
          <Loading label={`Drafting an article from ${from}…`} />
          <button type="button" className="button" onClick={() => void back()}>
            Stop <kbd>Esc</kbd>
          </button>
        </>
      )}
    </div>
  );
}
