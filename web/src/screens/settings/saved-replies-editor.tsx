// The rich-text body of a saved reply (TipTap): bold, italic, lists, links; placeholders are
// inserted at the cursor with a button each. The editor's own <style> is not injected (the CSP
// allows no inline style without a nonce): config.css styles it.
import { EditorContent, useEditor, useEditorState } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useId } from 'react';
import { PLACEHOLDERS } from '../../lib/placeholders';

export function ReplyBodyEditor({
  label,
  html,
  onChange,
  error,
}: {
  label: string;
  html: string;
  onChange(html: string, empty: boolean): void;
  error?: string;
}) {
  const id = useId();
  const editor = useEditor({
    extensions: [
      StarterKit.configure({
        heading: false,
        codeBlock: false,
        horizontalRule: false,
        link: { openOnClick: false, autolink: true, protocols: ['http', 'https', 'mailto'] },
      }),
    ],
    content: html,
    injectCSS: false,
    editorProps: {
      attributes: {
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-labelledby': `${id}-label`,
        'aria-describedby': `${id}-hint${error ? ` ${id}-error` : ''}`,
        ...(error ? { 'aria-invalid': 'true' } : {}),
        class: 'rich-body',
      },
    },
    onUpdate: ({ editor: e }) => onChange(e.getHTML(), e.isEmpty),
  });
  const state = useEditorState({
    editor,
    selector: ({ editor: e }) => ({
      bold: e?.isActive('bold') ?? false,
      italic: e?.isActive('italic') ?? false,
      bullets: e?.isActive('bulletList') ?? false,
      numbers: e?.isActive('orderedList') ?? false,
    }),
  });
  const tool = (name: string, pressed: boolean | undefined, run: () => void) => (
    <button type="button" className="button" aria-pressed={pressed ?? false} onClick={run} disabled={!editor}>
      {name}
    </button>
  );
  return (
    <div className="field rich-field">
      <span id={`${id}-label`} className="field-label">
        {label}
      </span>
      <div className="rich-tools" role="toolbar" aria-label={`Formatting of ${label.toLowerCase()}`}>
        {tool('Bold', state?.bold, () => editor?.chain().focus().toggleBold().run())}
        {tool('Italic', state?.italic, () => editor?.chain().focus().toggleItalic().run())}
        {tool('Bulleted list', state?.bullets, () => editor?.chain().focus().toggleBulletList().run())}
        {tool('Numbered list', state?.numbers, () => editor?.chain().focus().toggleOrderedList().run())}
      </div>
      <EditorContent editor={editor} />
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
      <p id={`${id}-hint`} className="hint">
        Placeholders are filled in when the reply is inserted on a ticket.
      </p>
      <ul className="placeholders" aria-label="Placeholders">
        {PLACEHOLDERS.map((p) => (
          <li key={p.token}>
            <button
              type="button"
              className="button"
              title={p.about}
              aria-label={`Insert ${p.token}: ${p.about}`}
              disabled={!editor}
              onClick={() => editor?.chain().focus().insertContent(p.token).run()}
            >
              {p.token}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
