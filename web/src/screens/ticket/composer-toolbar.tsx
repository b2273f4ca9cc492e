// The composer's formatting buttons (composer.tsx): bold, italic, link, bulleted and numbered
// list, quote; what the API's sanitizer keeps (src/platform/html/sanitize.ts) and what agents of
// other help desks format replies with. One tab stop, the arrow keys (and Home, End) move between
// the buttons, as in a toolbar; each has its name and, where it applies, its state (pressed) at
// the selection (ui/format-toolbar.tsx, Radix's toolbar). TipTap's own keys do the same from the
// text box (Ctrl+B, Ctrl+I, Ctrl+Shift+8, Ctrl+Shift+7, Ctrl+Shift+B); Ctrl+K opens the link's box.
import * as Popover from '@radix-ui/react-popover';
import { type Editor, useEditorState } from '@tiptap/react';
import { type FormEvent, useId, useState } from 'react';
import { type FormatTool, FormatToolbar, ToolButton } from '../../ui/format-toolbar';

const TOOLS: FormatTool[] = [
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
    // "1." comes from the CSS: the visible text stays part of the name (axe, WCAG 2.5.3).
    face: <span className="format-tool-numbers">List</span>,
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
  const link = { key: 'link', node: <LinkTool editor={editor} open={linkOpen} onOpen={onLinkOpen} /> };
  return <FormatToolbar editor={editor} tools={[...TOOLS.slice(0, LINK_AT), link, ...TOOLS.slice(LINK_AT)]} />;
}

/**
 * The link's box: the address for the selected words (or, with nothing selected, the address
 * inserted as its own text), Remove on a link. Focus goes back to the text box when it closes.
 */
function LinkTool({ editor, open, onOpen }: { editor: Editor; open: boolean; onOpen(open: boolean): void }) {
  const active = useEditorState({ editor, selector: ({ editor: e }) => e?.isActive('link') ?? false }) ?? false;
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
      <Popover.Trigger asChild>
        <ToolButton label="Link" keys="Ctrl+K" pressed={active}>
          Link
        </ToolButton>
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
