// The composer's formatting buttons (composer.tsx): bold, italic, link, bulleted and numbered
// list, quote; what the API's sanitizer keeps (src/platform/html/sanitize.ts) and what agents of
// other help desks format replies with. One tab stop, the arrow keys (and Home, End) move between
// the buttons, as in a toolbar; each has its name and, where it applies, its state (pressed) at
// the selection (ui/format-toolbar.tsx, Radix's toolbar). TipTap's own keys do the same from the
// text box (Ctrl+B, Ctrl+I, Ctrl+Shift+8, Ctrl+Shift+7, Ctrl+Shift+B); Ctrl+K opens the link's box.
import type { Editor } from '@tiptap/react';
import { BASIC_TOOLS, type FormatTool, FormatToolbar } from '../../ui/format-toolbar';
import { LinkTool } from '../../ui/link-tool';

const TOOLS: FormatTool[] = [
  ...BASIC_TOOLS,
  {
    label: 'Quote',
    icon: 'quote',
    keys: 'Ctrl+Shift+B',
    active: (e) => e.isActive('blockquote'),
    run: (e) => e.chain().focus().toggleBlockquote().run(),
  },
];
/** Where the link's button sits among the others. */
const LINK_AT = 2;

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
