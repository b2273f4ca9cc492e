// The knowledge base's editor (docs/help-center.md "Publish articles"): collections (create,
// rename, order, delete) and their articles (status, views), at /knowledge-base; an article opens
// in the editor at /knowledge-base/articles/<id> (a new one at /knowledge-base/articles/new, or
// /knowledge-base/articles/new/<collection id> with its collection preselected). /knowledge-base/collections/<id> lists one
// collection's articles. Changes made elsewhere (another agent, the API) arrive live.
// /knowledge-base/articles/from-ticket/<ticket id> opens a new article drafted by AI from a solved
// ticket (ai-draft.tsx).
import * as Dialog from '@radix-ui/react-dialog';
import { Link, useParams } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import {
  type Collection,
  useArticles,
  useCollections,
  useCreateCollection,
  useDeleteCollection,
  useKbLive,
  useKbRefresh,
  useOrderCollections,
  useUpdateCollection,
} from '../../data/kb';
import { useWorkspace } from '../../lib/context';
import { ago } from '../../lib/format';
import { canWrite, useRole } from '../../lib/role';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { count } from '../../ui/words';
import { AiArticleDraft } from './ai-draft';
import { ArticleEditor } from './editor';
import './kb.css';

export function KnowledgeBase() {
  const ws = useWorkspace();
  const params = useParams({ strict: false }) as { _splat?: string };
  const [kind = '', id = '', extra = ''] = (params._splat ?? '').split('/').filter(Boolean);
  // Another agent's change, or one made through the API: what is shown is fetched again.
  useKbLive(ws);
  if (kind === 'articles' && id === 'from-ticket' && extra) return <AiArticleDraft key={extra} ticketId={extra} />;
  if (kind === 'articles' && id)
    return <ArticleEditor key={id} id={id === 'new' ? null : id} collectionId={extra || null} />;
  return <Overview collectionId={kind === 'collections' && id ? id : null} />;
}

function Overview({ collectionId }: { collectionId: string | null }) {
  const role = useRole();
  const writer = canWrite(role);
  const collections = useCollections(useWorkspace());
  const current = collectionId ? collections.data?.find((c) => c.id === collectionId) : undefined;
  return (
    <div className="screen kb">
      <PageTitle
        actions={
          writer ? (
            <Link
              to="/knowledge-base/$"
              params={{
                _splat: collectionId && collectionId !== 'none' ? `articles/new/${collectionId}` : 'articles/new',
              }}
              className="button kb-primary"
            >
              New article
            </Link>
          ) : undefined
        }
      >
        Knowledge base
      </PageTitle>
      {!writer && <p className="hint">You can read the knowledge base. Only agents and admins can change it.</p>}
      <div className="kb-layout">
        <Collections selected={collectionId} writer={writer} />
        <section aria-labelledby="kb-articles-title" className="kb-articles">
          <h2 id="kb-articles-title">
            {collectionId === 'none'
              ? 'Articles in no collection'
              : current
                ? `Articles in ${current.name}`
                : 'All articles'}
          </h2>
          <Articles collectionId={collectionId} />
        </section>
      </div>
    </div>
  );
}

function Collections({ selected, writer }: { selected: string | null; writer: boolean }) {
  const ws = useWorkspace();
  const collections = useCollections(ws);
  const createCollection = useCreateCollection(ws);
  const orderCollections = useOrderCollections(ws);
  const deleteCollection = useDeleteCollection(ws);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [moveError, setMoveError] = useState<unknown>(null);
  const refresh = useKbRefresh(ws);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return;
    setBusy(true);
    setError(null);
    try {
      await createCollection.mutateAsync(name.trim());
      setName('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  /** Moves a collection one place up or down: the positions are renumbered in the new order. */
  const move = async (index: number, by: -1 | 1) => {
    const list = collections.data ?? [];
    const order = list.slice();
    const [c] = order.splice(index, 1);
    if (!c) return;
    order.splice(index + by, 0, c);
    setMoveError(null);
    try {
      await orderCollections.mutateAsync(order);
    } catch (err) {
      setMoveError(err);
    }
  };

  const list = collections.data ?? [];
  return (
    <nav className="kb-collections" aria-labelledby="kb-collections-title">
      <h2 id="kb-collections-title">Collections</h2>
      {collections.error ? <ErrorNote error={collections.error} what="Could not load the collections" /> : null}
      {collections.isPending && <Loading />}
      <ul>
        <li>
          <Link to="/knowledge-base" className="view-link" aria-current={selected === null ? 'page' : undefined}>
            All articles
          </Link>
        </li>
        {list.map((c, i) => (
          <li key={c.id} className="kb-collection">
            <Link
              to="/knowledge-base/$"
              params={{ _splat: `collections/${c.id}` }}
              className="view-link"
              aria-current={selected === c.id ? 'page' : undefined}
            >
              <span>{c.name}</span> <span className="count">{c.article_count}</span>
            </Link>
            {writer && (
              <span className="kb-collection-actions">
                <button
                  type="button"
                  className="icon-button"
                  aria-label={`Move ${c.name} up`}
                  disabled={i === 0}
                  onClick={() => void move(i, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="icon-button"
                  aria-label={`Move ${c.name} down`}
                  disabled={i === list.length - 1}
                  onClick={() => void move(i, 1)}
                >
                  ↓
                </button>
                <RenameCollection collection={c} onDone={refresh} />
                <ConfirmButton
                  className="button danger small"
                  title={`Delete the collection ${c.name}?`}
                  description={
                    c.article_count > 0
                      ? `Its ${count(c.article_count, 'article')} ${c.article_count === 1 ? 'is' : 'are'} not deleted: ${c.article_count === 1 ? 'it stays' : 'they stay'} in the knowledge base, in no collection.`
                      : 'It has no articles.'
                  }
                  confirm="Delete collection"
                  onConfirm={async () => {
                    await deleteCollection.mutateAsync(c.id);
                  }}
                >
                  Delete<span className="visually-hidden"> {c.name}</span>
                </ConfirmButton>
              </span>
            )}
          </li>
        ))}
        <li>
          <Link
            to="/knowledge-base/$"
            params={{ _splat: 'collections/none' }}
            className="view-link"
            aria-current={selected === 'none' ? 'page' : undefined}
          >
            In no collection
          </Link>
        </li>
      </ul>
      <ErrorNote error={moveError} what="Could not change the order" />
      {writer && (
        <form onSubmit={create} className="kb-new-collection">
          <TextField
            label="New collection"
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={200}
            error={fieldError(error, 'name')}
          />
          <button type="submit" className="button" disabled={busy || !name.trim()}>
            Add collection
          </button>
          {!fieldError(error, 'name') && <ErrorNote error={error} what="Could not add the collection" />}
        </form>
      )}
    </nav>
  );
}

function RenameCollection({ collection, onDone }: { collection: Collection; onDone(): Promise<unknown> }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(collection.name);
  const [description, setDescription] = useState(collection.description ?? '');
  const [error, setError] = useState<unknown>(null);
  const update = useUpdateCollection();
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await update.mutateAsync({ id: collection.id, name: name.trim(), description: description.trim() || null });
      await onDone();
      setOpen(false);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setName(collection.name);
        setDescription(collection.description ?? '');
        setError(null);
      }}
    >
      <Dialog.Trigger className="button small">
        Rename<span className="visually-hidden"> {collection.name}</span>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>Rename the collection</Dialog.Title>
          <Dialog.Description className="hint">
            Its address on the help center stays the same ({collection.slug}).
          </Dialog.Description>
          <form onSubmit={save}>
            <TextField
              label="Name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              maxLength={200}
              required
              error={fieldError(error, 'name')}
            />
            <TextField
              label="Description"
              value={description}
              onChange={(e) => setDescription(e.target.value)}
              maxLength={1000}
              hint="Shown under its name on the help center."
            />
            {!fieldError(error, 'name') && <ErrorNote error={error} what="Could not rename it" />}
            <div className="dialog-actions">
              <Dialog.Close className="button">Cancel</Dialog.Close>
              <button type="submit" className="primary" disabled={!name.trim()}>
                Save
              </button>
            </div>
          </form>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

type StatusFilter = '' | 'draft' | 'published';

function Articles({ collectionId }: { collectionId: string | null }) {
  const ws = useWorkspace();
  const [status, setStatus] = useState<StatusFilter>('');
  const query = {
    ...(collectionId ? { collection_id: collectionId } : {}),
    ...(status ? { status } : {}),
    limit: 50,
  };
  const list = useArticles(ws, query);
  const articles = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <>
      <SelectField
        label="Status"
        value={status}
        onChange={(e) => setStatus(e.target.value as StatusFilter)}
        options={[
          ['', 'Drafts and published'],
          ['draft', 'Drafts'],
          ['published', 'Published'],
        ]}
      />
      {list.error ? <ErrorNote error={list.error} what="Could not load the articles" /> : null}
      {list.isPending ? (
        <Loading />
      ) : articles.length === 0 ? (
        <p className="empty">No articles here yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="table kb-table">
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Status</th>
                <th scope="col">Views</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {articles.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link to="/knowledge-base/$" params={{ _splat: `articles/${a.id}` }}>
                      {a.title}
                    </Link>
                  </td>
                  <td>
                    <span className={`kb-status kb-status-${a.status}`}>
                      {a.status === 'published' ? 'Published' : 'Draft'}
                    </span>
                  </td>
                  <td>{a.views}</td>
                  <td>
                    <time dateTime={a.updated_at}>{ago(a.updated_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasNextPage && (
        <button type="button" className="button" onClick={() => void list.fetchNextPage()}>
          {list.isFetchingNextPage ? 'Loading…' : 'Show more articles'}
        </button>
      )}
    </>
  );
}
