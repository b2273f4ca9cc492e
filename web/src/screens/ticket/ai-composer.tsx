// The composer's AI actions (docs/app.md "AI"), shown only while AI is on in the workspace:
// "Draft a reply" (d) streams the drafted reply into the editor as it arrives and lists the
// articles it used under it; "Rewrite" (w) in one of six modes and "Translate" (t) to the
// customer's language (or a chosen one) work on the selection, or the whole reply when nothing is
// selected. Each result is one change: one undo (Ctrl+Z, or Undo) brings back what was there.
// While one runs the editor is read-only; Escape (or Stop) stops it, as leaving the page does.

import * as Menu from '@radix-ui/react-dropdown-menu';
import type { Node as PmNode } from '@tiptap/pm/model';
import { type Editor, useEditorState } from '@tiptap/react';
import { useEffect, useRef, useState } from 'react';
import {
  aiErrorText,
  customerLanguage,
  draftReply,
  isStopped,
  LANGUAGES,
  languageName,
  REWRITE_MODES,
  type RewriteMode,
  rewrite,
  type Source,
  translate,
  useAiOn,
  useStoppable,
} from '../../data/ai';
import type { Ticket } from '../../lib/api';
import { useShortcuts } from '../../lib/keys';
import { Icon } from '../../ui/icons';
import { replaceAll, replaceTarget, showWithoutHistory, snapshot, streamedHtml, targetOf } from './ai-editor';
import { AiErrorText } from './ai-error';
import './ai.css';

export interface AiComposer {
  on: boolean;
  busy: boolean;
  editor: Editor | null;
  /** What runs now ("Drafting a reply…"), for the status line. */
  working: string | null;
  notice: string | null;
  error: string | null;
  sources: Source[];
  /** The editor still holds the last AI change (Undo takes it back). */
  undoable: boolean;
  customerLanguage: string | null;
  rewriteMenu: [boolean, (open: boolean) => void];
  translateMenu: [boolean, (open: boolean) => void];
  draft(): void;
  rewrite(mode: RewriteMode): void;
  translate(target: string): void;
  stop(): void;
  undo(): void;
}

export function useAiComposer({
  ws,
  ticket,
  editor,
  html,
  empty,
  onReply,
}: {
  ws: string;
  ticket: Ticket;
  editor: Editor | null;
  /** The reply's HTML as it would be sent. */
  html(): string;
  /** Nothing written (the reply was sent, or cleared). */
  empty: boolean;
  /** A drafted reply is a reply: the composer switches to it from a note. */
  onReply(): void;
}): AiComposer {
  const on = useAiOn(ws);
  const run = useStoppable();
  const [working, setWorking] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sources, setSources] = useState<Source[]>([]);
  // The documents before and after the last AI change: the editor still holds it (Undo is
  // offered), it was undone (its notice and sources go), or it was edited since.
  const change = useRef<{ before: PmNode; after: PmNode } | null>(null);
  const held = useEditorState({
    editor,
    selector: ({ editor: e }) => {
      const c = change.current;
      if (!e || !c) return 'none';
      return e.state.doc === c.after ? 'after' : e.state.doc.eq(c.before) ? 'undone' : 'edited';
    },
  });
  const rewriteMenu = useState(false);
  const translateMenu = useState(false);
  const language = customerLanguage(ticket);

  useEffect(() => {
    if (empty) setSources([]);
  }, [empty]);
  useEffect(() => {
    if (held !== 'undone') return;
    change.current = null;
    setNotice(null);
    setSources([]);
  }, [held]);

  /** Runs `work` on the editor (read-only meanwhile); `what` names it for the status line. */
  const perform = async (what: string, done: string, work: (e: Editor, signal: AbortSignal) => Promise<void>) => {
    if (!editor || run.busy) return;
    const signal = run.begin();
    const before = snapshot(editor);
    const beforeDoc = editor.state.doc;
    change.current = null;
    setWorking(what);
    setNotice(null);
    setError(null);
    editor.setEditable(false);
    try {
      await work(editor, signal);
      change.current = { before: beforeDoc, after: editor.state.doc };
      setNotice(done);
    } catch (err) {
      if (editor.isDestroyed) return;
      editor.setEditable(true);
      showWithoutHistory(editor, before);
      if (isStopped(err)) setNotice('Stopped: the reply is as it was.');
      else setError(aiErrorText(err));
    } finally {
      if (!editor.isDestroyed) editor.setEditable(true);
      run.end(signal);
      setWorking(null);
    }
  };

  const draft = () => {
    onReply();
    setSources([]);
    void perform(
      'Drafting a reply…',
      'Draft ready: read it before sending. Undo (Ctrl+Z) brings back what was there.',
      async (e, signal) => {
        const before = snapshot(e);
        let text = '';
        const d = await draftReply(
          ticket.id,
          (delta) => {
            text += delta;
            showWithoutHistory(e, streamedHtml(text));
          },
          signal,
        );
        e.setEditable(true);
        replaceAll(e, before, d.body_html);
        setSources(d.sources);
      },
    );
  };

  const onTarget = (what: string, done: string, call: (html: string, signal: AbortSignal) => Promise<string>) =>
    perform(what, done, async (e, signal) => {
      const target = targetOf(e, html());
      const result = await call(target.html, signal);
      e.setEditable(true);
      replaceTarget(e, target, result);
    });

  const doRewrite = (mode: RewriteMode) => {
    const label = REWRITE_MODES.find(([m]) => m === mode)?.[1] ?? mode;
    void onTarget(
      `Rewriting: ${label.toLowerCase()}…`,
      `Rewritten (${label.toLowerCase()}). Undo (Ctrl+Z) brings back what was there.`,
      (h, s) => rewrite(h, mode, s),
    );
  };

  const doTranslate = (target: string) => {
    void onTarget(
      `Translating to ${languageName(target)}…`,
      `Translated to ${languageName(target)}. Undo (Ctrl+Z) brings back what was there.`,
      async (h, s) => {
        const t = await translate(h, target, s);
        return t.html ?? h;
      },
    );
  };

  useShortcuts(
    {
      d: () => draft(),
      w: () => !empty && rewriteMenu[1](true),
      t: () => {
        if (empty) return;
        if (language) doTranslate(language);
        else translateMenu[1](true);
      },
    },
    on && !!editor && !run.busy,
  );

  return {
    on,
    busy: run.busy,
    editor,
    working,
    notice,
    error,
    sources,
    undoable: held === 'after',
    customerLanguage: language,
    rewriteMenu,
    translateMenu,
    draft,
    rewrite: doRewrite,
    translate: doTranslate,
    stop: run.stop,
    undo: () => editor?.chain().focus().undo().run(),
  };
}

/** The AI's buttons above the editor: Draft a reply, Rewrite ▾, Translate; Stop while one runs. */
export function AiComposerBar({ ai, empty }: { ai: AiComposer; empty: boolean }) {
  if (!ai.on || !ai.editor) return null;
  if (ai.busy) {
    return (
      <fieldset className="ai-bar">
        <legend className="visually-hidden">AI</legend>
        <button type="button" className="button" onClick={ai.stop}>
          <Icon name="stop" />
          Stop <kbd>Esc</kbd>
        </button>
      </fieldset>
    );
  }
  const [rewriteOpen, setRewriteOpen] = ai.rewriteMenu;
  const [translateOpen, setTranslateOpen] = ai.translateMenu;
  const nothing = empty ? 'Write something first' : undefined;
  const scope = ai.editor.state.selection.empty ? 'the reply' : 'the selection';
  return (
    <fieldset className="ai-bar">
      <legend className="visually-hidden">AI</legend>
      <button type="button" className="button" onClick={ai.draft}>
        <Icon name="ai" />
        Draft a reply <kbd>d</kbd>
      </button>
      <Menu.Root open={rewriteOpen} onOpenChange={setRewriteOpen}>
        <Menu.Trigger className="button" disabled={empty} title={nothing}>
          <Icon name="rewrite" />
          Rewrite <kbd>w</kbd>
        </Menu.Trigger>
        <Menu.Portal>
          <Menu.Content className="menu ai-menu" align="start" sideOffset={4}>
            <Menu.Label className="menu-label">Rewrite {scope}</Menu.Label>
            {REWRITE_MODES.map(([mode, label]) => (
              <Menu.Item key={mode} className="menu-item" onSelect={() => ai.rewrite(mode)}>
                {label}
              </Menu.Item>
            ))}
          </Menu.Content>
        </Menu.Portal>
      </Menu.Root>
      {ai.customerLanguage ? (
        <button
          type="button"
          className="button"
          disabled={empty}
          title={nothing}
          onClick={() => ai.translate(ai.customerLanguage!)}
        >
          <Icon name="translate" />
          Translate to {languageName(ai.customerLanguage)} <kbd>t</kbd>
        </button>
      ) : (
        <Menu.Root open={translateOpen} onOpenChange={setTranslateOpen}>
          <Menu.Trigger className="button" disabled={empty} title={nothing}>
            <Icon name="translate" />
            Translate <kbd>t</kbd>
          </Menu.Trigger>
          <Menu.Portal>
            <Menu.Content className="menu ai-menu" align="start" sideOffset={4}>
              <Menu.Label className="menu-label">Translate {scope} to</Menu.Label>
              {LANGUAGES.map((l) => (
                <Menu.Item key={l} className="menu-item" onSelect={() => ai.translate(l)}>
                  {languageName(l)}
                </Menu.Item>
              ))}
            </Menu.Content>
          </Menu.Portal>
        </Menu.Root>
      )}
    </fieldset>
  );
}

/** Under the editor: what runs, the draft's sources as links, Undo, a failure in words. */
export function AiComposerNotes({ ai }: { ai: AiComposer }) {
  if (!ai.on) return null;
  return (
    <div className="ai-notes">
      {ai.sources.length > 0 && (
        <div className="ai-sources">
          <span id="ai-draft-sources">Sources of the draft:</span>
          <ul aria-labelledby="ai-draft-sources">
            {ai.sources.map((s) => (
              <li key={s.article_id}>
                <a href={s.url} target="_blank" rel="noopener">
                  {s.title}
                  <span className="visually-hidden"> (opens in a new tab)</span>
                </a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <p className="ai-progress" role="status">
        {ai.working ?? ai.notice}
        {!ai.working && ai.undoable && ai.notice && (
          <button type="button" className="link-button" onClick={ai.undo}>
            Undo
          </button>
        )}
      </p>
      <p className="error" role="alert" hidden={!ai.error}>
        <AiErrorText text={ai.error} />
      </p>
    </div>
  );
}
