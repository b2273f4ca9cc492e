// The composer: a reply or an internal note, with attachments (uploaded at once through
// POST /v1/attachments, sent with the message as attachment_ids), saved replies (their
// placeholders filled here: lib/placeholders.ts), @mentions in notes (a list of members while typing
// @name; sent as `<a href="#mention-<user id>">@Name</a>`, which the API notifies), the status to
// set on send, and "send and next" (Ctrl+Shift+Enter, or the box to tick): the next ticket of the
// inbox list the agent came from. Other agents' and the customer's typing shows under it.
import * as Popover from '@radix-ui/react-popover';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import {
  type ChangeEvent,
  type FormEvent,
  type KeyboardEvent,
  type Ref,
  useEffect,
  useId,
  useImperativeHandle,
  useRef,
  useState,
} from 'react';
import { api, errorText, type Message, ok, type Ticket, type TicketStatus } from '../../lib/api';
import { bytes, STATUS_LABEL } from '../../lib/format';
import type { TicketLive } from '../../lib/live';
import { fillPlaceholders } from '../../lib/placeholders';
import { keys, useMembers } from '../../lib/queries';
import { useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { type Attachment, sameOrigin } from './thread';

type Kind = 'reply' | 'note';

export interface ComposerHandle {
  open(kind: Kind): void;
}

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Plain text to paragraphs; each chosen @mention becomes the API's mention link. */
export function plainToHtml(text: string, mentions: { id: string; name: string }[] = []): string {
  return text
    .trim()
    .split(/\n{2,}/)
    .map((p) => {
      let html = escapeHtml(p).replaceAll('\n', '<br>');
      for (const m of mentions) {
        const at = `@${escapeHtml(m.name)}`;
        html = html.split(at).join(`<a href="#mention-${m.id}">${at}</a>`);
      }
      return `<p>${html}</p>`;
    })
    .join('');
}

/** A saved reply's HTML as the text box's plain text (paragraphs become blank lines). */
function htmlToText(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const br of Array.from(doc.querySelectorAll('br'))) br.replaceWith('\n');
  const blocks = Array.from(doc.body.querySelectorAll('p, li, h1, h2, h3, h4, blockquote, pre'));
  if (blocks.length === 0) return (doc.body.textContent ?? '').trim();
  return blocks
    .filter((b) => !b.querySelector('p, li'))
    .map((b) => (b.tagName === 'LI' ? `- ${b.textContent ?? ''}` : (b.textContent ?? '')))
    .join('\n\n')
    .trim();
}

export function Composer({
  ws,
  ticket,
  ref,
  live,
  typing,
  customerTyping,
}: {
  ws: string;
  ticket: Ticket;
  ref: Ref<ComposerHandle>;
  /** The ticket's topic: the others see that I reply and type. */
  live: TicketLive | null;
  /** Who else is typing on this ticket now. */
  typing: string | null;
  customerTyping: boolean;
}) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const session = useSession();
  const agent = session.status === 'signed_in' ? { name: session.user.name, email: session.user.email } : null;
  const workspace = session.status === 'signed_in' ? session.me?.workspaces.find((w) => w.id === ws) : undefined;
  const [kind, setKind] = useState<Kind>('reply');
  const [text, setText] = useState('');
  const [status, setStatus] = useState<'' | TicketStatus>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [files, setFiles] = useState<Attachment[]>([]);
  const [uploading, setUploading] = useState<string[]>([]);
  const [mentions, setMentions] = useState<{ id: string; name: string }[]>([]);
  const [andNext, setAndNext] = useState(() => localStorage.getItem('send-and-next') === '1');
  const box = useRef<HTMLTextAreaElement>(null);
  const members = useMembers(ws).data ?? [];

  useImperativeHandle(ref, () => ({
    open(k) {
      setKind(k);
      box.current?.focus();
    },
  }));

  const nextTicket = (): number | null => {
    try {
      const order = JSON.parse(sessionStorage.getItem('inbox-order') ?? '[]') as number[];
      const i = order.indexOf(ticket.number);
      return order.slice(i + 1).find((x) => x !== ticket.number) ?? null;
    } catch {
      return null;
    }
  };

  const send = async (next: boolean) => {
    if (!text.trim() || busy || uploading.length > 0) return;
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      const used = kind === 'note' ? mentions.filter((m) => text.includes(`@${m.name}`)) : [];
      const m = await ok(
        api.POST('/v1/tickets/{id}/messages', {
          params: { path: { id: ticket.id } },
          body: {
            kind,
            body_html: plainToHtml(text, used),
            ...(status ? { status } : {}),
            ...(files.length > 0 ? { attachment_ids: files.map((f) => f.id) } : {}),
          },
        }),
      );
      queryClient.setQueryData<Message[]>(keys.messages(ws, ticket.id), (old) =>
        old && !old.some((x) => x.id === m.id) ? [...old, m] : old,
      );
      if (status) void queryClient.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) });
      setText('');
      setStatus('');
      setFiles([]);
      setMentions([]);
      setSent(kind === 'note' ? 'Note added.' : 'Reply sent.');
      if (next) {
        const n = nextTicket();
        if (n) void navigate({ to: '/tickets/$number', params: { number: String(n) } });
        else void navigate({ to: '/inbox', search: {} });
      }
    } catch (err) {
      setError(`Could not send: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void send(andNext);
  };

  const upload = async (e: ChangeEvent<HTMLInputElement>) => {
    const chosen = Array.from(e.target.files ?? []);
    e.target.value = '';
    setError(null);
    for (const file of chosen) {
      setUploading((u) => [...u, file.name]);
      try {
        const a = await ok(
          api.POST('/v1/attachments', {
            body: { file: file as unknown as string },
            bodySerializer: () => {
              const fd = new FormData();
              fd.append('file', file, file.name);
              return fd;
            },
          }),
        );
        setFiles((f) => [...f, a]);
      } catch (err) {
        setError(`Could not attach ${file.name}: ${errorText(err)}`);
      } finally {
        setUploading((u) => u.filter((x) => x !== file.name));
      }
    }
  };

  // @mentions: the word being typed after "@" in a note.
  const [caret, setCaret] = useState(0);
  const mentionQuery = kind === 'note' ? (/(?:^|\s)@([^\s@]{0,30})$/u.exec(text.slice(0, caret))?.[1] ?? null) : null;
  const candidates =
    mentionQuery === null
      ? []
      : members
          .filter((m) => {
            const q = mentionQuery.toLowerCase();
            return (
              m.user.name
                .toLowerCase()
                .split(/\s+/)
                .some((w) => w.startsWith(q)) || m.user.email.startsWith(q)
            );
          })
          .slice(0, 6);
  const [active, setActive] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new word after @ starts at the top
  useEffect(() => setActive(0), [mentionQuery]);
  const [mentionClosed, setMentionClosed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new word after @ opens the list again
  useEffect(() => setMentionClosed(false), [mentionQuery]);
  const showMentions = candidates.length > 0 && !mentionClosed;
  const listId = useId();
  const pick = (member: (typeof members)[number]) => {
    const before = text.slice(0, caret).replace(/@([^\s@]{0,30})$/u, `@${member.user.name} `);
    const after = text.slice(caret);
    setText(before + after);
    setMentions((m) =>
      m.some((x) => x.id === member.user.id) ? m : [...m, { id: member.user.id, name: member.user.name }],
    );
    requestAnimationFrame(() => {
      box.current?.focus();
      box.current?.setSelectionRange(before.length, before.length);
      setCaret(before.length);
    });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (showMentions) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        const d = e.key === 'ArrowDown' ? 1 : -1;
        setActive((a) => (a + d + candidates.length) % candidates.length);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        pick(candidates[active]!);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        setMentionClosed(true);
        return;
      }
    }
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void send(e.shiftKey || andNext);
    }
  };
  const noun = kind === 'note' ? 'note' : 'reply';
  useEffect(() => live?.setState(text.trim() ? 'replying' : 'viewing'), [live, text]);
  return (
    <form className={`composer composer-${kind}`} onSubmit={onSubmit} aria-label="Write a reply or note">
      <div className="composer-top">
        <fieldset className="kind-switch">
          <legend className="visually-hidden">Kind of message</legend>
          <label>
            <input
              type="radio"
              name="kind"
              value="reply"
              checked={kind === 'reply'}
              onChange={() => setKind('reply')}
            />
            Reply <kbd>r</kbd>
          </label>
          <label>
            <input type="radio" name="kind" value="note" checked={kind === 'note'} onChange={() => setKind('note')} />
            Internal note <kbd>n</kbd>
          </label>
        </fieldset>
        <SavedReplies
          ws={ws}
          onPick={(html) => {
            // The contact's company, as the customer panel loaded it.
            const contact = ticket.contact
              ? queryClient.getQueryData<{ company?: { name?: string } | null }>(keys.contact(ws, ticket.contact.id))
              : undefined;
            const filled = fillPlaceholders(htmlToText(html), {
              customer: ticket.contact,
              company: contact?.company,
              ticket,
              agent,
              workspace,
            });
            setText((t) => (t.trim() ? `${t.replace(/\s+$/, '')}\n\n${filled}` : filled));
            requestAnimationFrame(() => box.current?.focus());
          }}
        />
      </div>
      <label htmlFor="composer-text" className="visually-hidden">
        {kind === 'note' ? 'Internal note (only agents see it)' : `Reply to ${ticket.contact?.name ?? 'the customer'}`}
      </label>
      <div className="composer-box">
        <textarea
          id="composer-text"
          ref={box}
          rows={5}
          value={text}
          placeholder={
            kind === 'note'
              ? 'Write an internal note: only agents see it; @name mentions a colleague'
              : 'Write your reply'
          }
          aria-controls={showMentions ? listId : undefined}
          aria-autocomplete={showMentions ? 'list' : undefined}
          aria-activedescendant={showMentions ? `${listId}-${active}` : undefined}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart);
            live?.typing();
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
          onKeyDown={onKeyDown}
        />
        {showMentions && (
          <div className="mention-list menu" id={listId} role="listbox" aria-label="Mention a colleague">
            {candidates.map((m, i) => (
              <div
                key={m.user.id}
                id={`${listId}-${i}`}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                className="menu-item"
                data-highlighted={i === active ? '' : undefined}
                onMouseDown={(e) => {
                  e.preventDefault();
                  pick(m);
                }}
              >
                <Avatar url={m.user.avatar_url} name={m.user.name} size={24} /> {m.user.name}
              </div>
            ))}
          </div>
        )}
      </div>
      {(files.length > 0 || uploading.length > 0) && (
        <ul className="composer-files" aria-label="Attached files">
          {files.map((f) => {
            const src = f.content_type.startsWith('image/') ? sameOrigin(f.url) : null;
            return (
              <li key={f.id}>
                {src && <img src={src} alt="" className="thumb thumb-small" width={48} height={36} />}
                <span>
                  {f.filename} <span className="hint">({bytes(f.size_bytes)})</span>
                </span>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Remove ${f.filename}`}
                  onClick={() => setFiles((all) => all.filter((x) => x.id !== f.id))}
                >
                  Remove
                </button>
              </li>
            );
          })}
          {uploading.map((name) => (
            <li key={`up-${name}`} className="hint">
              Uploading {name}…
            </li>
          ))}
        </ul>
      )}
      <div className="composer-foot">
        <label className="attach button">
          Attach files
          <input type="file" multiple className="visually-hidden" onChange={(e) => void upload(e)} />
        </label>
        <label htmlFor="composer-status">Then set status</label>
        <select id="composer-status" value={status} onChange={(e) => setStatus(e.target.value as TicketStatus | '')}>
          <option value="">Keep {STATUS_LABEL[ticket.status]}</option>
          <option value="pending">Pending</option>
          <option value="on_hold">On hold</option>
          <option value="solved">Solved</option>
        </select>
        <label className="and-next">
          <input
            type="checkbox"
            checked={andNext}
            onChange={(e) => {
              setAndNext(e.target.checked);
              localStorage.setItem('send-and-next', e.target.checked ? '1' : '0');
            }}
          />
          Then open the next ticket
        </label>
        <button type="submit" className="primary" disabled={busy || !text.trim() || uploading.length > 0}>
          {busy ? 'Sending…' : kind === 'note' ? 'Add note' : 'Send'}
        </button>
      </div>
      <p className="hint">Ctrl+Enter sends the {noun}; Ctrl+Shift+Enter sends it and opens the next ticket.</p>
      <p className="typing" role="status">
        {typing ? `${typing} is typing…` : customerTyping ? `${ticket.contact?.name ?? 'The customer'} is typing…` : ''}
      </p>
      <p className="error" role="alert" hidden={!error}>
        {error}
      </p>
      <p className="sent" role="status">
        {sent}
      </p>
    </form>
  );
}

/** The saved replies, searched by title or shortcut (GET /v1/saved-replies?q=). */
function SavedReplies({ ws, onPick }: { ws: string; onPick(html: string): void }) {
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const [debounced, setDebounced] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setDebounced(q.trim()), 200);
    return () => clearTimeout(t);
  }, [q]);
  const replies = useQuery({
    queryKey: [...keys.savedReplies(ws), debounced],
    queryFn: async () =>
      (
        await ok(
          api.GET('/v1/saved-replies', { params: { query: { limit: 20, ...(debounced ? { q: debounced } : {}) } } }),
        )
      ).data,
    enabled: open,
  });
  const searchId = useId();
  return (
    <Popover.Root open={open} onOpenChange={setOpen}>
      <Popover.Trigger className="button saved-replies-trigger">Saved replies</Popover.Trigger>
      <Popover.Portal>
        <Popover.Content className="menu saved-replies" align="end" sideOffset={4}>
          <label htmlFor={searchId} className="menu-label">
            Find a saved reply
          </label>
          <input
            id={searchId}
            type="search"
            value={q}
            maxLength={200}
            onChange={(e) => setQ(e.target.value)}
            placeholder="Title or shortcut"
          />
          {replies.error ? (
            <p className="error" role="alert">
              Could not load the saved replies: {errorText(replies.error)}
            </p>
          ) : !replies.data ? (
            <p className="loading">Loading…</p>
          ) : replies.data.length === 0 ? (
            <p className="hint">{debounced ? 'None matches.' : 'No saved replies yet: add them in Settings.'}</p>
          ) : (
            <ul className="saved-reply-list">
              {replies.data.map((r) => (
                <li key={r.id}>
                  <button
                    type="button"
                    className="menu-item"
                    onClick={() => {
                      onPick(r.body_html);
                      setOpen(false);
                    }}
                  >
                    <strong>{r.title}</strong>
                    {r.shortcut ? <span className="hint"> /{r.shortcut}</span> : null}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
