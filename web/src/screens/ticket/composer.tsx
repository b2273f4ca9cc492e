// The composer: a reply or an internal note, written in TipTap (bold, italic, links, lists,
// quotes: composer-toolbar.tsx; sent as the editor's HTML, which the API sanitizes), with
// attachments (uploaded at once through POST /v1/attachments, sent with the message as
// attachment_ids), saved replies (inserted with their formatting, placeholders filled here:
// lib/placeholders.ts), @mentions in notes (TipTap's Mention: a list of members while typing
// @name; sent as `<a href="#mention-<user id>">@Name</a>`, which the API notifies), the status to
// set on send, and "send and next" (Ctrl+Shift+Enter, or the box to tick): the next ticket of the
// inbox list the agent came from. Other agents' and the customer's typing shows under it. What was
// sent is confirmed as it goes: a mailed reply is queued, then sent, or saved and not sent while
// outgoing mail is not set up (lib/mail.ts; the message as the thread's live cache has it).
import * as Popover from '@radix-ui/react-popover';
import { useNavigate } from '@tanstack/react-router';
import Mention from '@tiptap/extension-mention';
import type { EditorState } from '@tiptap/pm/state';
import { type Editor, EditorContent, useEditor, useEditorState } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import {
  type ChangeEvent,
  type FormEvent,
  type Ref,
  useEffect,
  useId,
  useImperativeHandle,
  useRef,
  useState,
} from 'react';
import { useLoadedContact } from '../../data/contacts';
import { useMembers } from '../../data/members';
import { useMessageInThread, useSavedReplySearch, useSendMessage, useUploadAttachment } from '../../data/messages';
import { errorText, type Message, type Ticket, type TicketStatus } from '../../lib/api';
import { bytes, STATUS_LABEL } from '../../lib/format';
import type { TicketLive } from '../../lib/live';
import { deliveryTone, sentText } from '../../lib/mail';
import { fillPlaceholders } from '../../lib/placeholders';
import { useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { Icon } from '../../ui/icons';
import { contactName } from '../../ui/words';
import { AiComposerBar, AiComposerNotes, useAiComposer } from './ai-composer';
import { ComposerToolbar } from './composer-toolbar';
import { type Attachment, sameOrigin } from './thread';
import '../../ui/prosemirror.css';

type Kind = 'reply' | 'note';
type Member = NonNullable<ReturnType<typeof useMembers>['data']>[number];

export interface ComposerHandle {
  open(kind: Kind): void;
}

/** Nothing but whitespace (empty paragraphs included): nothing to send. */
const blank = (e: Editor | null) => !e || e.getText().trim() === '';

/**
 * What is sent: the editor's HTML, without the empty paragraphs TipTap keeps at the end. A reply
 * goes to the customer: its mentions (if the agent switched from a note) become their plain text.
 */
function bodyHtml(html: string, kind: Kind): string {
  let out = html.replace(/(?:<p><\/p>)+$/, '');
  if (kind === 'reply' && out.includes('#mention-')) {
    const doc = new DOMParser().parseFromString(out, 'text/html');
    for (const a of Array.from(doc.querySelectorAll('a[href^="#mention-"]'))) a.replaceWith(a.textContent ?? '');
    out = doc.body.innerHTML;
  }
  return out;
}

/** Members with a word of their name, or their address, starting with what follows @ (six at most). */
function matching(members: Member[], query: string): Member[] {
  const q = query.toLowerCase();
  if (q.length > 30) return [];
  return members
    .filter(
      (m) =>
        m.user.name
          .toLowerCase()
          .split(/\s+/)
          .some((w) => w.startsWith(q)) || m.user.email.toLowerCase().startsWith(q),
    )
    .slice(0, 6);
}

/** The mention list while @name is typed in a note: Mention's suggestion, shown by React. */
interface Suggesting {
  query: string;
  items: Member[];
  pick(member: Member): void;
}

/** What the editor's callbacks (made once, with the editor) reach of the latest render. */
interface Bridge {
  mentions: boolean;
  members: Member[];
  suggest(s: Suggesting | null): void;
  suggestKey(e: KeyboardEvent): boolean;
  key(e: KeyboardEvent): boolean;
  typed(): void;
}

function useComposerEditor(bridge: { current: Bridge }, attributes: Record<string, string>) {
  // is-empty shows the placeholder (ticket.css): nothing but the one empty paragraph.
  const attrs = (state: EditorState) => {
    const only = state.doc.childCount === 1 ? state.doc.firstChild : null;
    const empty = only?.type.name === 'paragraph' && only.content.size === 0;
    return { ...attributes, class: `${attributes.class ?? ''}${empty ? ' is-empty' : ''}` };
  };
  const [extensions] = useState(() => [
    StarterKit.configure({
      heading: false,
      codeBlock: false,
      horizontalRule: false,
      link: { openOnClick: false, autolink: true, defaultProtocol: 'https' },
    }),
    // A mention link (a saved reply's, a pasted one) is a mention again, not a plain link.
    Mention.extend({
      parseHTML: () => [
        {
          tag: 'a[href^="#mention-"]',
          priority: 60,
          getAttrs: (el: HTMLElement) => ({
            id: el.getAttribute('href')?.slice('#mention-'.length) ?? null,
            label: el.textContent?.replace(/^@/, '') ?? null,
          }),
        },
      ],
    }).configure({
      renderText: ({ node }) => `@${node.attrs.label ?? ''}`,
      // The API's mention link; the sanitizer would drop Mention's own data-* attributes.
      renderHTML: ({ node }) => ['a', { href: `#mention-${node.attrs.id}` }, `@${node.attrs.label ?? ''}`],
      suggestion: {
        char: '@',
        allow: ({ state, range }) =>
          bridge.current.mentions &&
          state.doc.resolve(range.from).parent.type.contentMatch.matchType(state.schema.nodes.mention!) !== null,
        items: ({ query }) => matching(bridge.current.members, query),
        render: () => {
          const show = (p: { query: string; items: Member[]; command(a: { id: string; label: string }): void }) =>
            bridge.current.suggest({
              query: p.query,
              items: p.items,
              pick: (m) => p.command({ id: m.user.id, label: m.user.name }),
            });
          return {
            onStart: show,
            onUpdate: show,
            onExit: () => bridge.current.suggest(null),
            onKeyDown: ({ event }) => bridge.current.suggestKey(event),
          };
        },
      },
    }),
  ]);
  return useEditor({
    extensions,
    // TipTap's <style> is not injected (the CSP allows none without its nonce): ui/prosemirror.css.
    injectCSS: false,
    editorProps: {
      attributes: attrs,
      handleKeyDown: (_view, e) => bridge.current.key(e),
    },
    onUpdate: () => bridge.current.typed(),
  });
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
  const navigate = useNavigate();
  const sendMessage = useSendMessage(ws, ticket);
  const uploadAttachment = useUploadAttachment();
  const loadedContact = useLoadedContact(ws);
  const session = useSession();
  const agent = session.status === 'signed_in' ? { name: session.user.name, email: session.user.email } : null;
  const workspace = session.status === 'signed_in' ? session.me?.workspaces.find((w) => w.id === ws) : undefined;
  const [kind, setKind] = useState<Kind>('reply');
  const [status, setStatus] = useState<'' | TicketStatus>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // What was sent last, followed live in the thread's cache (queued → sent, or saved, not sent).
  const [last, setLast] = useState<Message | null>(null);
  const lastNow = useMessageInThread(ws, ticket.id, last?.id ?? null).data;
  const sent = last ? sentText(lastNow ?? last) : null;
  // Green only for what really left (or needed not to): queued is neutral, not sent is a warning.
  const sentTone = last ? deliveryTone(lastNow ?? last) : 'ok';
  const [files, setFiles] = useState<Attachment[]>([]);
  const [uploading, setUploading] = useState<string[]>([]);
  const [andNext, setAndNext] = useState(() => localStorage.getItem('send-and-next') === '1');
  const [linkOpen, setLinkOpen] = useState(false);
  const members = useMembers(ws).data ?? [];

  // @mentions: Mention's suggestion while @name is typed in a note; the list and its keys are ours.
  const [suggesting, setSuggesting] = useState<Suggesting | null>(null);
  const [active, setActive] = useState(0);
  const query = suggesting?.query ?? null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new word after @ starts at the top
  useEffect(() => setActive(0), [query]);
  const candidates = suggesting?.items ?? [];
  // Escape closes it: the suggestion ends (until the word changes), and so does the list.
  const showMentions = kind === 'note' && candidates.length > 0;
  const listId = useId();
  const labelId = useId();
  const hintId = useId();

  const placeholder =
    kind === 'note' ? 'Write an internal note: only agents see it; @name mentions a colleague' : 'Write your reply';
  const bridge = useRef<Bridge>(null as unknown as Bridge);
  const editor = useComposerEditor(bridge, {
    id: 'composer-text',
    'aria-multiline': 'true',
    'aria-labelledby': labelId,
    'aria-describedby': hintId,
    'aria-placeholder': placeholder,
    'data-placeholder': placeholder,
    class: 'composer-text',
    ...(showMentions
      ? { 'aria-controls': listId, 'aria-autocomplete': 'list', 'aria-activedescendant': `${listId}-${active}` }
      : {}),
  });
  const empty = useEditorState({ editor, selector: ({ editor: e }) => blank(e) });
  // Draft, rewrite, translate (hidden while AI is off): ai-composer.tsx.
  const ai = useAiComposer({
    ws,
    ticket,
    editor,
    html: () => bodyHtml(editor?.getHTML() ?? '', kind),
    empty,
    onReply: () => setKind('reply'),
  });

  useImperativeHandle(ref, () => ({
    open(k) {
      setKind(k);
      editor?.commands.focus();
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
    if (!editor || blank(editor) || busy || ai.busy || uploading.length > 0) return;
    setBusy(true);
    setError(null);
    setLast(null);
    try {
      const m = await sendMessage.mutateAsync({
        kind,
        body_html: bodyHtml(editor.getHTML(), kind),
        ...(status ? { status } : {}),
        ...(files.length > 0 ? { attachment_ids: files.map((f) => f.id) } : {}),
      });
      editor.commands.clearContent(false);
      setStatus('');
      setFiles([]);
      setLast(m);
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

  bridge.current = {
    mentions: kind === 'note',
    members,
    suggest: setSuggesting,
    suggestKey(e) {
      if (!showMentions) return false;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        const d = e.key === 'ArrowDown' ? 1 : -1;
        setActive((a) => (a + d + candidates.length) % candidates.length);
        return true;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        suggesting?.pick(candidates[active] ?? candidates[0]!);
        return true;
      }
      return false;
    },
    key(e) {
      // Escape leaves the text box (then the page's Escape goes back to the inbox): ProseMirror
      // would take the key and do nothing. While @name is typed, it ends the mention's list first.
      if (e.key === 'Escape' && !suggesting && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) {
        editor?.view.dom.blur();
        return true;
      }
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        void send(e.shiftKey || andNext);
        return true;
      }
      if (e.key.toLowerCase() === 'k' && (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey) {
        setLinkOpen(true);
        return true;
      }
      return false;
    },
    typed: () => live?.typing(),
  };

  const upload = async (e: ChangeEvent<HTMLInputElement>) => {
    const chosen = Array.from(e.target.files ?? []);
    e.target.value = '';
    setError(null);
    for (const file of chosen) {
      setUploading((u) => [...u, file.name]);
      try {
        const a = await uploadAttachment.mutateAsync(file);
        setFiles((f) => [...f, a]);
      } catch (err) {
        setError(`Could not attach ${file.name}: ${errorText(err)}`);
      } finally {
        setUploading((u) => u.filter((x) => x !== file.name));
      }
    }
  };

  /** A saved reply, placeholders filled: at the cursor, or in place of an empty text. */
  const insertSaved = (html: string) => {
    if (!editor) return;
    // The contact's company, as the customer panel loaded it.
    const contact = ticket.contact ? loadedContact(ticket.contact.id) : undefined;
    const filled = fillPlaceholders(
      html,
      { customer: ticket.contact, company: contact?.company, ticket, agent, workspace },
      { html: true },
    );
    if (blank(editor)) editor.chain().setContent(filled).focus('end').run();
    else editor.chain().insertContent(filled).focus().run();
  };

  const noun = kind === 'note' ? 'note' : 'reply';
  useEffect(() => live?.setState(empty ? 'viewing' : 'replying'), [live, empty]);
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
        <SavedReplies ws={ws} onPick={insertSaved} />
        <AiComposerBar ai={ai} empty={empty} />
      </div>
      <span id={labelId} className="visually-hidden">
        {kind === 'note' ? 'Internal note (only agents see it)' : `Reply to ${contactName(ticket.contact)}`}
      </span>
      <div className="composer-box">
        {editor && <ComposerToolbar editor={editor} linkOpen={linkOpen} onLinkOpen={setLinkOpen} />}
        <EditorContent editor={editor} className="composer-editor" />
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
                  suggesting?.pick(m);
                }}
              >
                <Avatar url={m.user.avatar_url} name={m.user.name} size={24} /> {m.user.name}
              </div>
            ))}
          </div>
        )}
      </div>
      <AiComposerNotes ai={ai} />
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
          <Icon name="attach" />
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
        <button type="submit" className="primary" disabled={busy || ai.busy || empty || uploading.length > 0}>
          <Icon name="send" />
          {busy ? 'Sending…' : kind === 'note' ? 'Add note' : 'Send'}
        </button>
      </div>
      <p className="hint" id={hintId}>
        Ctrl+Enter sends the {noun}; Ctrl+Shift+Enter sends it and opens the next ticket.
      </p>
      <p className="typing" role="status">
        {typing ? `${typing} is typing…` : customerTyping ? `${contactName(ticket.contact)} is typing…` : ''}
      </p>
      <p className="error" role="alert" hidden={!error}>
        {error}
      </p>
      <p className={`sent sent-${sentTone}`} role="status">
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
  const replies = useSavedReplySearch(ws, debounced, open);
  const searchId = useId();
  // A picked reply goes into the text box, which keeps the focus (not the popover's button).
  const picked = useRef(false);
  return (
    <Popover.Root open={open} onOpenChange={setOpen}>
      <Popover.Trigger className="button saved-replies-trigger">
        <Icon name="savedReplies" />
        Saved replies
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          className="menu saved-replies"
          align="end"
          sideOffset={4}
          onCloseAutoFocus={(e) => {
            if (picked.current) e.preventDefault();
            picked.current = false;
          }}
        >
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
                      picked.current = true;
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
