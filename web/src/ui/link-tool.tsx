// The link button of the app's TipTap editors (ui/format-toolbar.tsx): a toolbar button that opens
// a box for the address of the selected words (with nothing selected, the address is inserted as
// its own text); Remove on a link; Escape or Cancel goes back to the text. An address typed
// without its scheme becomes one the API's sanitizer keeps (https:, or mailto: for an email).
import * as Popover from '@radix-ui/react-popover';
import { type Editor, useEditorState } from '@tiptap/react';
import { type FormEvent, useId, useState } from 'react';
import { ToolButton } from './format-toolbar';
import { Icon } from './icons';

/** An address as typed, made one the API keeps: http(s), mailto:, tel: or #fragment. */
export function linkAddress(typed: string): string {
  const url = typed.trim();
  if (!url || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('#')) return url;
  if (/^[^\s/@]+@[^\s/@]+\.[^\s/@]+$/.test(url)) return `mailto:${url}`;
  return `https://${url.replace(/^\/+/, '')}`;
}

/**
 * The link's box: the address for the selected words (or, with nothing selected, the address
 * inserted as its own text), Remove on a link. Focus goes back to the text box when it closes.
 */
export function LinkTool({
  editor,
  open: openAsked,
  onOpen: onOpenAsked,
}: {
  editor: Editor;
  /** Given by an editor that opens the box from its text too (the composer's Ctrl+K). */
  open?: boolean;
  onOpen?(open: boolean): void;
}) {
  const active = useEditorState({ editor, selector: ({ editor: e }) => e?.isActive('link') ?? false }) ?? false;
  const [openHere, setOpenHere] = useState(false);
  const open = openAsked ?? openHere;
  const onOpen = onOpenAsked ?? setOpenHere;
  const [href, setHref] = useState('');
  const [wasOpen, setWasOpen] = useState(false);
  // Filled with the link's address when it opens (from the button or Ctrl+K).
  if (open !== wasOpen) {
    setWasOpen(open);
    if (open) setHref((editor.getAttributes('link').href as string | undefined) ?? '');
  }
  const id = useId();
  const apply = (e: FormEvent) => {
    // The box is in a portal, but React sends its submit to the editor's form too.
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
          <Icon name="link" />
        </ToolButton>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          className="dialog link-box"
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
