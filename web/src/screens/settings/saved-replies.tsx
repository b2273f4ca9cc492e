// Saved replies (/v1/saved-replies): the workspace's canned answers, searched by title or
// shortcut (the API's q), newest first, more on demand; create, edit (title, shortcut, a
// rich-text body with placeholders inserted by button) and delete. Agents and above change them;
// viewers read them. The API has no personal saved replies: every one is the workspace's.
import { useEffect, useState } from 'react';
import { keys } from '../../data/keys';
import { useConfigSavedReplies, useDeleteSavedReply, useSaveSavedReply } from '../../data/saved-replies';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { ago } from '../../lib/format';
import { useRole } from '../../lib/role';
import { DeleteButton, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { check, FormDialog, problem, useLiveRefresh } from './config-kit';
import { ReplyBodyEditor } from './saved-replies-editor';
import type { SectionProps } from './section';
import { MoreButton } from './shared';

type Reply = Schemas['SavedReply'];
const SHORTCUT = /^[A-Za-z0-9_-]{1,50}$/;

/** The body as a line of text, for the list. */
function preview(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  return (doc.body.textContent ?? '').replace(/\s+/g, ' ').trim();
}

export default function SavedReplies(_: SectionProps) {
  const ws = useWorkspace();
  const role = useRole();
  const mayWrite = role !== 'viewer';
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setSearch(q.trim()), 250);
    return () => clearTimeout(t);
  }, [q]);
  const replies = useConfigSavedReplies(ws, search);
  useLiveRefresh(['saved_reply.'], keys.configSavedReplies(ws));
  const remove = useDeleteSavedReply(ws);
  const [editing, setEditing] = useState<Reply | 'new' | null>(null);
  const all = replies.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <div className="config">
      <PageTitle
        actions={
          mayWrite ? (
            <button type="button" className="primary" onClick={() => setEditing('new')}>
              New saved reply
            </button>
          ) : undefined
        }
      >
        Saved replies
      </PageTitle>
      <p className="hint">Answers every agent of the workspace can insert in a reply, by title or shortcut.</p>
      {!mayWrite && <ReadOnlyNote>Viewers can read saved replies; agents and admins change them.</ReadOnlyNote>}
      <div className="config-toolbar">
        <TextField
          label="Search saved replies"
          type="search"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          hint="Part of the title or the shortcut."
        />
      </div>
      <ErrorNote error={replies.error} what="Could not load the saved replies" />
      {replies.isPending ? (
        <Loading />
      ) : all.length === 0 ? (
        <p className="empty">{search ? `No saved reply matches “${search}”.` : 'No saved replies yet.'}</p>
      ) : (
        <ul className="config-list" aria-label="Saved replies">
          {all.map((r) => (
            <li key={r.id} className="config-row">
              <div className="grow">
                <strong>{r.title}</strong> {r.shortcut && <span className="badge">/{r.shortcut}</span>}
                <p className="reply-body">{preview(r.body_html)}</p>
                <p className="hint">Changed {ago(r.updated_at)}</p>
              </div>
              {mayWrite && (
                <div className="actions">
                  <button type="button" className="button" aria-label={`Edit ${r.title}`} onClick={() => setEditing(r)}>
                    Edit
                  </button>
                  <DeleteButton
                    name={r.title}
                    title={`Delete the saved reply “${r.title}”?`}
                    description="No agent can insert it any more. Replies already sent with it stay as they are."
                    confirm="Delete saved reply"
                    onConfirm={() => remove.mutateAsync(r.id)}
                  />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <MoreButton list={replies} className="button">
        Show more
      </MoreButton>
      {editing !== null && <ReplyDialog reply={editing === 'new' ? null : editing} onClose={() => setEditing(null)} />}
    </div>
  );
}

function ReplyDialog({ reply, onClose }: { reply: Reply | null; onClose(): void }) {
  const saveReply = useSaveSavedReply(useWorkspace());
  const [title, setTitle] = useState(reply?.title ?? '');
  const [shortcut, setShortcut] = useState(reply?.shortcut ?? '');
  const [body, setBody] = useState(reply?.body_html ?? '');
  const [empty, setEmpty] = useState(!reply);
  const error = useState<unknown>(null);
  const err = error[0];
  const save = async () => {
    const t = title.trim();
    const s = shortcut.trim();
    check({
      title: !t ? 'Give the saved reply a title.' : t.length > 200 ? 'At most 200 characters.' : undefined,
      shortcut: s && !SHORTCUT.test(s) ? 'Letters, digits, - and _ only (up to 50), no spaces.' : undefined,
      body_html: empty ? 'Write the reply.' : undefined,
    });
    const payload = { title: t, shortcut: s || null, body_html: body };
    await saveReply.mutateAsync({ id: reply?.id ?? null, body: payload });
  };
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={reply ? `Edit “${reply.title}”` : 'New saved reply'}
      submit={reply ? 'Save reply' : 'Create saved reply'}
      onSubmit={save}
      fields={['title', 'shortcut', 'body_html']}
      error={error}
      conflict
      wide
    >
      <TextField
        label="Title"
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        error={problem(err, 'title')}
        autoComplete="off"
      />
      <TextField
        label="Shortcut"
        value={shortcut}
        onChange={(e) => setShortcut(e.target.value)}
        hint="Optional: a short word to find it quickly, unique in the workspace."
        error={problem(err, 'shortcut', true)}
        autoComplete="off"
      />
      <ReplyBodyEditor
        label="Body"
        html={body}
        onChange={(html, isEmpty) => {
          setBody(html);
          setEmpty(isEmpty);
        }}
        error={problem(err, 'body_html')}
      />
    </FormDialog>
  );
}
