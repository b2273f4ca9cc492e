// The composer's formatting buttons (composer.tsx): bold, italic, link, bulleted and numbered
// list, quote; what the API's sanitizer keeps (src/platform/html/sanitize.ts) and what agents of
// other help desks format replies with. One tab stop, the arrow keys (and Home, End) move between
// the buttons, as in a toolbar; each has its name and, where it applies, its state (pressed) at
// the selection. TipTap's own keys do the same from the text box (Ctrl+B, Ctrl+I, Ctrl+Shift+8,
// Ctrl+Shift+7, Ctrl+Shift+B); Ctrl+K opens the link's box.
import * as Popover from '@radix-ui/react-popover';
import { type Editor, useEditorState } from '@tiptap/react';
import { type FormEvent, type KeyboardEvent, type ReactNode, useId, useRef, useState } from 'react';

interface Tool {
  label: string;
  /** What the button shows (its name, shortened; the name is its aria-label). */
  face: ReactNode;
  keys: string;
  active(e: Editor): boolean;
  run(e: Editor): void;
}

const TOOLS: Tool[] = [
  {
    label: 'Bold',
    face: <strong>B</strong>,
    keys: 'Ctrl+B',
    active: (e) => e.isActive('bold'),
    run: (e) => e.chain().focus().toggleBold().run(),
  },
  {
    label: 'Italic',
    face: <em>I</em>,
    keys: 'Ctrl+I',
    active: (e) => e.isActive('italic'),
    run: (e) => e.chain().focus().toggleItalic().run(),
  },
  {
    label: 'Bulleted list',
    face: '• List',
    keys: 'Ctrl+Shift+8',
    active: (e) => e.isActive('bulletList'),
    run: (e) => e.chain().focus().toggleBulletList().run(),
  },
  {
    label: 'Numbered list',
    // "1." comes from ticket.css: the visible text stays part of the name (axe, WCAG 2.5.3).
    face: <span className="composer-tool-numbers">List</span>,
    keys: 'Ctrl+Shift+7',
    active: (e) => e.isActive('orderedList'),
    run: (e) => e.chain().focus().toggleOrderedList().run(),
  },
  {
    label: 'Quote',
    face: '“ Quote',
    keys: 'Ctrl+Shift+B',
    active: (e) => e.isActive('blockquote'),
    run: (e) => e.chain().focus().toggleBlockquote().run(),
  },
];
/** Where the link's button sits among the others. */
const LINK_AT = 2;

/** An address as typed, made one the API keeps: http(s), mailto:, tel: or #fragment. */
export function linkAddress(typed: string): string {
  const url = typed.trim();
  if (!url || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('#')) return url;
  if (/^[^\s/@]+@[^\s/@]+\.[^\s/@]+$/.test(url)) return `mailto:${url}`;
  return `https://${url.replace(/^\/+/, '')}`;
}

export function ComposerToolbar({
  editor,
  linkOpen,
  onLinkOpen,
}: {
  editor: Editor;
  /** The link's box, opened by its button or Ctrl+K in the text box. */
  linkOpen: boolean;
  onLinkOpen(open: boolean): void;
}) {
  const state = useEditorState({
    editor,
    selector: ({ editor: e }) => ({
      pressed: TOOLS.map((t) => (e ? t.active(e) : false)),
      link: e?.isActive('link') ?? false,
    }),
  });
  const [focus, setFocus] = useState(0);
  const bar = useRef<HTMLDivElement>(null);
  const count = TOOLS.length + 1;
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.target instanceof HTMLElement && !e.target.hasAttribute('data-tool')) return;
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    const to = e.key === 'Home' ? 0 : e.key === 'End' ? count - 1 : step ? (focus + step + count) % count : null;
    if (to === null) return;
    e.preventDefault();
    setFocus(to);
    bar.current?.querySelectorAll<HTMLElement>('[data-tool]')[to]?.focus();
  };
  const button = (t: Tool, i: number) => {
    const at = i < LINK_AT ? i : i + 1;
    return (
      <button
        key={t.label}
        type="button"
        data-tool
        className="composer-tool"
        aria-label={t.label}
        title={`${t.label} (${t.keys})`}
        aria-pressed={state?.pressed[i] ?? false}
        tabIndex={focus === at ? 0 : -1}
        onFocus={() => setFocus(at)}
        onMouseDown={(e) => e.preventDefault()}
        onClick={() => t.run(editor)}
      >
        <span aria-hidden="true">{t.face}</span>
      </button>
    );
  };
  return (
    <div role="toolbar" aria-label="Formatting" className="composer-tools" ref={bar} onKeyDown={onKeyDown}>
      {TOOLS.slice(0, LINK_AT).map((t, i) => button(t, i))}
      <LinkTool
        editor={editor}
        active={state?.link ?? false}
        open={linkOpen}
        onOpen={onLinkOpen}
        tabIndex={focus === LINK_AT ? 0 : -1}
        onFocus={() => setFocus(LINK_AT)}
      />
      {TOOLS.slice(LINK_AT).map((t, i) => button(t, i + LINK_AT))}
    </div>
  );
}

/**
 * The link's box: the address for the selected words (or, with nothing selected, the address
 * inserted as its own text), Remove on a link. Focus goes back to the text box when it closes.
 */
function LinkTool({
  editor,
  active,
  open,
  onOpen,
  tabIndex,
  onFocus,
}: {
  editor: Editor;
  active: boolean;
  open: boolean;
  onOpen(open: boolean): void;
  tabIndex: number;
  onFocus(): void;
}) {
  const [href, setHref] = useState('');
  const [wasOpen, setWasOpen] = useState(false);
  // Filled with the link's address when it opens (from the button or Ctrl+K).
  if (open !== wasOpen) {
    setWasOpen(open);
    if (open) setHref((editor.getAttributes('link').href as string | undefined) ?? '');
  }
  const id = useId();
  const apply = (e: FormEvent) => {
    // The box is in a portal, but React sends its submit to the composer's form too.
    e.preventDefault();
    e.stopPropagation();
    const url = linkAddress(href);
    const chain = editor.chain().focus();
    if (!url) chain.extendMarkRange('link').unsetLink().run();
    else if (editor.state.selection.empty && !editor.isActive('link')) {
      chain
        .insertContent({ type: 'text', text: href.trim(), marks: [{ type: 'link', attrs: { href: url } }] })
        .unsetMark('link')
        .run();
    } else chain.extendMarkRange('link').setLink({ href: url }).run();
    onOpen(false);
  };
  return (
    <Popover.Root open={open} onOpenChange={onOpen}>
      <Popover.Trigger
        data-tool
        className="composer-tool"
        aria-label="Link"
        title="Link (Ctrl+K)"
        aria-pressed={active}
        tabIndex={tabIndex}
        onFocus={onFocus}
        onMouseDown={(e) => e.preventDefault()}
      >
        <span aria-hidden="true">Link</span>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          className="dialog composer-link"
          sideOffset={4}
          align="start"
          aria-label="Link"
          onCloseAutoFocus={(e) => {
            e.preventDefault();
            editor.commands.focus();
          }}
        >
          <form onSubmit={apply}>
            <label htmlFor={id}>Link address</label>
            <input
              id={id}
              type="text"
              inputMode="url"
              value={href}
              placeholder="https://"
              aria-describedby={`${id}-hint`}
              onChange={(e) => setHref(e.target.value)}
            />
            <p id={`${id}-hint`} className="hint">
              For the selected words; with none selected, the address is inserted. Empty removes the link.
            </p>
            <div className="dialog-actions">
              <Popover.Close className="button">Cancel</Popover.Close>
              {active && (
                <button
                  type="button"
                  className="button"
                  onClick={() => {
                    editor.chain().focus().extendMarkRange('link').unsetLink().run();
                    onOpen(false);
                  }}
                >
                  Remove link
                </button>
              )}
              <button type="submit" className="primary">
                Apply
              </button>
            </div>
          </form>
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
