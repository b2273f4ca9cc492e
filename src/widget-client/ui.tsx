// The widget's UI (Preact): the launcher with its unread badge, and the panel (a non-modal dialog)
// with the conversation list and a thread. Text from visitors and agents is rendered as text
// (body_text: Preact escapes it), never as HTML. Keyboard: everything is a button, link or field;
// Escape closes the panel and gives focus back to the launcher; focus moves into the panel when it
// opens and into the composer when a thread opens. Screen readers: labelled buttons, the thread is
// a live log, typing and the connection are announced politely, errors as alerts.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Controller, Pending, State } from './controller.js';
import { onBrand } from './styles.js';
import type { Attachment, Conversation, Message } from './types.js';

const PANEL_ID = 'hdw-panel';
const TITLE_ID = 'hdw-title';

const Icon = ({ d }: { d: string }) => (
  <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" aria-hidden="true" focusable="false">
    <path d={d} stroke-linecap="round" stroke-linejoin="round" />
  </svg>
);
const CHAT = 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.6A8 8 0 1 1 21 12z';
const CLOSE = 'M6 6l12 12M18 6L6 18';
const BACK = 'M15 18l-6-6 6-6';
const CLIP = 'M21 11.5l-8.6 8.6a5 5 0 0 1-7.1-7.1l8.6-8.6a3.3 3.3 0 0 1 4.7 4.7l-8.6 8.6a1.7 1.7 0 0 1-2.4-2.4l7.9-7.9';
const SEND = 'M4 12l16-8-6 16-2.5-6.5L4 12z';

const time = (iso: string) => {
  const d = new Date(iso);
  const today = new Date().toDateString() === d.toDateString();
  return today
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
};

const initials = (name: string | null) =>
  (name ?? '?')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0]!.toUpperCase())
    .join('') || '?';

function Avatar({ name, url }: { name: string | null; url: string | null }) {
  if (url) return <img class="avatar" src={url} alt="" />;
  return (
    <span class="avatar" aria-hidden="true">
      {initials(name)}
    </span>
  );
}

function useController(c: Controller): State {
  const [, tick] = useState(0);
  useEffect(() => c.subscribe(() => tick((n) => n + 1)), [c]);
  return c.state;
}

export function App({ c }: { c: Controller }) {
  const s = useController(c);
  const launcher = useRef<HTMLButtonElement>(null);
  if (s.phase !== 'ready' || !s.config) return null;
  const unread = c.unreadCount();
  const brand = s.config.brand_color;
  const label = s.open
    ? 'Close chat'
    : `Open chat${unread > 0 ? `, ${unread} unread ${unread === 1 ? 'reply' : 'replies'}` : ''}`;
  return (
    // The brand colour goes through the CSSOM (style.setProperty), which no page policy blocks.
    <div class="root" style={{ '--brand': brand, '--on-brand': onBrand(brand) }}>
      {s.open && (
        <Panel
          c={c}
          s={s}
          onClose={() => {
            c.close();
            launcher.current?.focus();
          }}
        />
      )}
      <button
        ref={launcher}
        type="button"
        class="launcher"
        aria-label={label}
        aria-expanded={s.open}
        aria-controls={PANEL_ID}
        onClick={() => c.toggle()}
      >
        <Icon d={s.open ? CLOSE : CHAT} />
        {unread > 0 && !s.open && (
          <span class="badge" aria-hidden="true">
            {unread > 99 ? '99+' : unread}
          </span>
        )}
      </button>
    </div>
  );
}

function Panel({ c, s, onClose }: { c: Controller; s: State; onClose(): void }) {
  const panel = useRef<HTMLDivElement>(null);
  const [dragging, setDragging] = useState(false);
  const inThread = s.view.name === 'thread';
  // Focus moves into the panel when it opens and when the view changes.
  const viewKey = s.view.name === 'thread' ? `t:${s.view.id ?? 'new'}:${s.askEmail}` : 'home';
  useEffect(() => {
    const el = panel.current?.querySelector<HTMLElement>('[data-autofocus]');
    (el ?? panel.current)?.focus();
  }, [viewKey]);

  const online = s.online;
  const presence =
    online.length === 0
      ? 'We will reply as soon as we can.'
      : `${online[0]!.name ?? 'Someone'}${online.length > 1 ? ` and ${online.length - 1} more` : ''} online now`;

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length > 0 && inThread && !s.askEmail) void c.attach(files);
  };

  return (
    <div
      ref={panel}
      id={PANEL_ID}
      class={`panel${dragging ? ' drop' : ''}`}
      role="dialog"
      aria-modal="false"
      aria-labelledby={TITLE_ID}
      tabIndex={-1}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onClose();
        }
      }}
      onDragOver={(e) => {
        if (!inThread) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <div class="head">
        {inThread && (
          <button type="button" class="icon" aria-label="Back to conversations" onClick={() => c.home()}>
            <Icon d={BACK} />
          </button>
        )}
        <div class="titles">
          <h2 id={TITLE_ID}>{s.config!.workspace_name}</h2>
          <p>{presence}</p>
          {online.length > 0 && (
            <div class="agents" aria-hidden="true">
              {online.slice(0, 4).map((a) => (
                <Avatar key={a.id} name={a.name} url={a.avatar} />
              ))}
            </div>
          )}
        </div>
        <button type="button" class="icon" aria-label="Close chat" onClick={onClose}>
          <Icon d={CLOSE} />
        </button>
      </div>
      <Connection s={s} />
      {s.error && (
        <div class="alert" role="alert">
          <p>{s.error}</p>
          <button type="button" onClick={() => c.dismissError()}>
            Dismiss
          </button>
        </div>
      )}
      {s.view.name === 'home' ? <Home c={c} s={s} /> : <Thread c={c} s={s} id={s.view.id} />}
    </div>
  );
}

function Connection({ s }: { s: State }) {
  const text =
    s.connection === 'offline'
      ? 'You are offline. The chat reconnects when your connection is back.'
      : s.connection === 'connecting' && s.session
        ? 'Connecting to the chat…'
        : null;
  return (
    <div role="status" class={text ? 'banner' : 'sr'}>
      {text}
    </div>
  );
}

function Home({ c, s }: { c: Controller; s: State }) {
  const list = s.conversations;
  return (
    <div class="body">
      {s.config!.greeting && <p class="greeting">{s.config!.greeting}</p>}
      <button type="button" class="primary" data-autofocus onClick={() => c.newConversation()}>
        Start a conversation
      </button>
      {list === null && s.session && <p>Loading your conversations…</p>}
      {list && list.length > 0 && (
        <section class="list" aria-labelledby="hdw-convs">
          <h3 id="hdw-convs">Your conversations</h3>
          <ul class="list">
            {list.map((conv) => (
              <li key={conv.id}>
                <ConversationItem c={c} conv={conv} unread={s.unread[conv.id] ?? 0} />
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}

function ConversationItem({ c, conv, unread }: { c: Controller; conv: Conversation; unread: number }) {
  const when = conv.last_message_at ?? conv.created_at;
  return (
    <button type="button" class="conv" onClick={() => c.showThread(conv.id)}>
      <span class="s">{conv.subject}</span>
      <span class="d">{time(when)}</span>
      {unread > 0 && (
        <span class="dot">
          {unread}
          <span class="sr"> unread</span>
        </span>
      )}
    </button>
  );
}

function Files({ files }: { files: Attachment[] }) {
  if (files.length === 0) return null;
  return (
    <ul class="files">
      {files.map((f) => (
        <li key={f.id}>
          <a href={f.url} target="_blank" rel="noopener noreferrer">
            {f.filename}
            {f.content_type.startsWith('image/') && <img src={f.url} alt="" loading="lazy" />}
          </a>
        </li>
      ))}
    </ul>
  );
}

function MessageItem({ m }: { m: Message }) {
  const mine = m.author.type === 'contact';
  const name = m.author.name ?? (m.author.type === 'ai' ? 'Assistant' : 'Support');
  return (
    <li class={`msg${mine ? ' me' : ''}`}>
      {!mine && <Avatar name={name} url={m.author.avatar_url} />}
      <div class="bubble">
        {mine ? <span class="sr">You: </span> : <p class="who">{name}</p>}
        <p class="text">{m.body_text}</p>
        <Files files={m.attachments} />
        <p class="time">
          <time dateTime={m.created_at}>{time(m.created_at)}</time>
        </p>
      </div>
    </li>
  );
}

function PendingItem({ c, p }: { c: Controller; p: Pending }) {
  return (
    <li class="msg me">
      <div class="bubble">
        <span class="sr">You: </span>
        <p class="text">{p.body}</p>
        <Files files={p.attachments} />
        {p.failed ? (
          <p class="failed" role="alert">
            Not sent: {p.failed}
            <button type="button" onClick={() => c.retry(p.localId)}>
              Retry
            </button>
          </p>
        ) : (
          <p class="time">Sending…</p>
        )}
      </div>
    </li>
  );
}

function Thread({ c, s, id }: { c: Controller; s: State; id: string | null }) {
  const body = useRef<HTMLDivElement>(null);
  const messages = id ? (s.messages[id] ?? null) : [];
  const pending = s.pending.filter((p) => p.conversationId === id);
  const typing = id ? s.typing[id] : undefined;
  const typingNow = typing && typing.until > Date.now() ? typing.name : null;
  const count = (messages?.length ?? 0) + pending.length;
  const rating = id ? (s.conversations?.find((x) => x.id === id)?.csat_url ?? null) : null;
  useEffect(() => {
    const el = body.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [count, typingNow]);
  return (
    <>
      <div class="body" ref={body}>
        {id === null && s.config!.greeting && <p class="greeting">{s.config!.greeting}</p>}
        {messages === null ? (
          <p>Loading the conversation…</p>
        ) : (
          <div role="log" aria-live="polite" aria-label="Messages">
            <ul class="log">
              {messages.map((m) => (
                <MessageItem key={m.id} m={m} />
              ))}
              {pending.map((p) => (
                <PendingItem key={p.localId} c={c} p={p} />
              ))}
            </ul>
          </div>
        )}
        <p class="typing" aria-live="polite">
          {typingNow ? `${typingNow} is typing…` : ''}
        </p>
        {rating && (
          <p class="rate">
            This conversation is solved.{' '}
            <a href={rating} target="_blank" rel="noopener noreferrer">
              Rate the help you got
            </a>
          </p>
        )}
      </div>
      <div class="foot">{s.askEmail ? <EmailForm c={c} /> : <Composer c={c} s={s} />}</div>
    </>
  );
}

function EmailForm({ c }: { c: Controller }) {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="email"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        await c.giveEmail(email.trim());
        setBusy(false);
      }}
    >
      <label for="hdw-email">Email</label>
      <p id="hdw-email-help">So that we can answer you, even after you leave this page.</p>
      <input
        id="hdw-email"
        type="email"
        required
        autoComplete="email"
        aria-describedby="hdw-email-help"
        value={email}
        data-autofocus
        onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
      />
      <button type="submit" class="primary" disabled={busy}>
        Continue
      </button>
    </form>
  );
}

function Composer({ c, s }: { c: Controller; s: State }) {
  const [text, setText] = useState('');
  const file = useRef<HTMLInputElement>(null);
  const uploading = c.uploading();
  const submit = async () => {
    if (text.trim() === '' || uploading) return;
    const sent = text;
    setText('');
    if (!(await c.send(sent))) setText(sent);
  };
  const suggestions: ComponentChildren =
    s.suggestions.length > 0 ? (
      <section class="suggest" aria-labelledby="hdw-suggest">
        <h3 id="hdw-suggest">These articles may answer your question</h3>
        <ul class="suggest">
          {s.suggestions.map((a) => (
            <li key={a.url}>
              <a href={a.url} target="_blank" rel="noopener noreferrer">
                {a.title}
              </a>
            </li>
          ))}
        </ul>
      </section>
    ) : null;
  return (
    <>
      {suggestions}
      {s.uploads.length > 0 && (
        <ul class="chips" aria-label="Files to send">
          {s.uploads.map((u) => (
            <li key={u.localId} class="chip">
              <span>
                {u.name}
                {u.error ? <span class="err"> — {u.error}</span> : !u.attachment ? ' (uploading…)' : ''}
              </span>
              <button
                type="button"
                class="icon"
                aria-label={`Remove ${u.name}`}
                onClick={() => c.removeUpload(u.localId)}
              >
                <Icon d={CLOSE} />
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label class="sr" for="hdw-text">
          Message
        </label>
        <textarea
          id="hdw-text"
          rows={1}
          placeholder="Write a message…"
          value={text}
          data-autofocus
          onInput={(e) => {
            const v = (e.target as HTMLTextAreaElement).value;
            setText(v);
            c.typed(v);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void submit();
            }
          }}
          onPaste={(e) => {
            const files = [...(e.clipboardData?.files ?? [])];
            if (files.length > 0) {
              e.preventDefault();
              void c.attach(files);
            }
          }}
        />
        <input
          ref={file}
          type="file"
          multiple
          class="sr"
          tabIndex={-1}
          aria-hidden="true"
          onChange={(e) => {
            const input = e.target as HTMLInputElement;
            const files = [...(input.files ?? [])];
            input.value = '';
            if (files.length > 0) void c.attach(files);
          }}
        />
        <button type="button" class="icon" aria-label="Attach a file" onClick={() => file.current?.click()}>
          <Icon d={CLIP} />
        </button>
        <button type="submit" class="icon" aria-label="Send" disabled={uploading || text.trim() === ''}>
          <Icon d={SEND} />
        </button>
      </form>
    </>
  );
}
