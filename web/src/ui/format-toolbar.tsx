// The formatting toolbar of the app's TipTap editors (the reply composer, the knowledge base's
// article editor, saved replies): Radix's Toolbar, so one tab stop with the arrow keys, Home and
// End moving along it. Each editor gives its own tools, starting from BASIC_TOOLS; each button shows its icon, is named
// (aria-label), shows its name and keys in its title (the tooltip) and is pressed (aria-pressed) when the selection has its format, read
// through TipTap's useEditorState. A press keeps the text's selection (mousedown does not move
// the focus); the tool's command focuses the editor again.
import * as Toolbar from '@radix-ui/react-toolbar';
import { type Editor, useEditorState } from '@tiptap/react';
import { type ComponentPropsWithRef, Fragment, type ReactNode } from 'react';
import { Icon, type IconName } from './icons';
import './format-toolbar.css';

export interface FormatTool {
  /** Its name (the button's aria-label), and what it shows unless `face` is given. */
  label: string;
  /** What the button shows: its icon (ui/icons.tsx), else `face`, else its name; hidden from screen readers. */
  icon?: IconName;
  face?: ReactNode;
  /** Its keyboard shortcut in the text box, shown in the title. */
  keys?: string;
  active?(e: Editor): boolean;
  run(e: Editor): void;
}

/** The tools every editor of the app has, each defined once (the editors add their own around them). */
export const FORMAT = {
  bold: {
    label: 'Bold',
    icon: 'bold',
    keys: 'Ctrl+B',
    active: (e) => e.isActive('bold'),
    run: (e) => e.chain().focus().toggleBold().run(),
  },
  italic: {
    label: 'Italic',
    icon: 'italic',
    keys: 'Ctrl+I',
    active: (e) => e.isActive('italic'),
    run: (e) => e.chain().focus().toggleItalic().run(),
  },
  bulletedList: {
    label: 'Bulleted list',
    icon: 'bulletedList',
    keys: 'Ctrl+Shift+8',
    active: (e) => e.isActive('bulletList'),
    run: (e) => e.chain().focus().toggleBulletList().run(),
  },
  numberedList: {
    label: 'Numbered list',
    icon: 'numberedList',
    keys: 'Ctrl+Shift+7',
    active: (e) => e.isActive('orderedList'),
    run: (e) => e.chain().focus().toggleOrderedList().run(),
  },
} satisfies Record<string, FormatTool>;

/**
 * Bold, italic, bulleted and numbered list, in that order: the saved replies' whole toolbar, and
 * where the reply composer and the article editor start from.
 */
export const BASIC_TOOLS: readonly FormatTool[] = [
  FORMAT.bold,
  FORMAT.italic,
  FORMAT.bulletedList,
  FORMAT.numberedList,
];

/** Any other control placed among the tools (the link's popover): rendered as given. */
export type FormatItem = FormatTool | { key: string; node: ReactNode };

export function FormatToolbar({
  editor,
  label = 'Formatting',
  tools,
}: {
  editor: Editor | null;
  label?: string;
  tools: readonly FormatItem[];
}) {
  const pressed = useEditorState({
    editor,
    selector: ({ editor: e }) => tools.map((t) => ('run' in t && e && t.active ? t.active(e) : false)),
  });
  return (
    <Toolbar.Root aria-label={label} className="format-tools">
      {tools.map((t, i) =>
        'run' in t ? (
          <ToolButton
            key={t.label}
            label={t.label}
            keys={t.keys}
            pressed={t.active ? (pressed?.[i] ?? false) : undefined}
            disabled={!editor}
            onClick={() => editor && t.run(editor)}
          >
            {t.icon ? <Icon name={t.icon} /> : (t.face ?? t.label)}
          </ToolButton>
        ) : (
          <Fragment key={t.key}>{t.node}</Fragment>
        ),
      )}
    </Toolbar.Root>
  );
}

/**
 * One of the toolbar's buttons, for a control of an editor's own among the tools (a popover's
 * trigger: `<Popover.Trigger asChild><ToolButton …/></Popover.Trigger>`).
 */
export function ToolButton({
  label,
  keys,
  pressed,
  children,
  ...props
}: Omit<ComponentPropsWithRef<typeof Toolbar.Button>, 'aria-label' | 'aria-pressed' | 'title'> & {
  label: string;
  keys?: string;
  pressed?: boolean;
  children: ReactNode;
}) {
  return (
    <Toolbar.Button
      {...props}
      className="format-tool"
      aria-label={label}
      aria-pressed={pressed}
      title={keys ? `${label} (${keys})` : undefined}
      onMouseDown={(e) => {
        // The text's selection stays (and with it what the tool applies to).
        e.preventDefault();
        props.onMouseDown?.(e);
      }}
    >
      <span aria-hidden="true">{children}</span>
    </Toolbar.Button>
  );
}
