// The inbox search's semantic matches (docs/app.md "Similar tickets and semantic matches"): with a
// search in the address and semantic search offered (/v1/ai/config: AI on, embeddings), GET
// /v1/ai/search asks for the same words, and the tickets and articles it found by meaning alone
// (its `semantic` ids) that the list above does not show already follow the list in a group named
// "Semantic matches". Its rows are links like the list's: j/k reach them after the list's rows
// (the inbox's `rows()`), Enter opens a ticket or the article in the knowledge base.
import { Link } from '@tanstack/react-router';
import type { Ref } from 'react';
import { semanticMatches, useAiSearch, useAiSearchOn } from '../../data/ai-search';
import { errorText } from '../../lib/api';
import { STATUS_LABEL } from '../../lib/format';
import { Icon } from '../../ui/icons';

export function SemanticMatches({
  ws,
  q,
  shown,
  listRef,
}: {
  ws: string;
  /** The search in the address ('' for none). */
  q: string;
  /** Ids of the tickets the list shows. */
  shown: ReadonlySet<string>;
  listRef: Ref<HTMLOListElement>;
}) {
  const on = useAiSearchOn(ws);
  const found = useAiSearch(ws, q, on);
  if (!on || q.trim() === '') return null;
  if (found.error) {
    return (
      <p className="error" role="alert">
        Could not search by meaning: {errorText(found.error)}
      </p>
    );
  }
  if (found.isPending) return <p className="hint semantic-wait">Looking for matches by meaning…</p>;
  const { tickets, articles } = semanticMatches(found.data, shown);
  if (tickets.length + articles.length === 0) return null;
  return (
    <section className="semantic-matches" aria-labelledby="semantic-title">
      <h2 id="semantic-title">
        <Icon name="ai" /> Semantic matches
      </h2>
      <p className="hint" id="semantic-hint">
        Found by meaning, not by the words.
      </p>
      <ol className="semantic-list" aria-label="Semantic matches" aria-describedby="semantic-hint" ref={listRef}>
        {tickets.map((t) => (
          <li key={t.id} data-semantic-id={t.id}>
            <Link to="/tickets/$number" params={{ number: String(t.number) }} className="ticket-row">
              <span className="row-top">
                <span className="subject">
                  <span className="number">#{t.number}</span> {t.subject}
                </span>
                <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
              </span>
              {t.last_message_preview && (
                <span className="row-bottom">
                  <span className="preview">{t.last_message_preview}</span>
                </span>
              )}
            </Link>
          </li>
        ))}
        {articles.map((a) => (
          <li key={a.id} data-semantic-id={a.id}>
            <Link to="/knowledge-base/$" params={{ _splat: `articles/${a.id}` }} className="ticket-row">
              <span className="row-top">
                <span className="subject">
                  <span className="kind">Article:</span> {a.title}
                </span>
                {a.status === 'draft' && <span className="status">Draft</span>}
              </span>
              {a.excerpt && (
                <span className="row-bottom">
                  <span className="preview">{a.excerpt}</span>
                </span>
              )}
            </Link>
          </li>
        ))}
      </ol>
    </section>
  );
}
