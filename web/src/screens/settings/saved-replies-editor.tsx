// The rich-text body of a saved reply (TipTap): bold, italic, lists (the shared toolbar,
// ui/format-toolbar.tsx), links; placeholders are inserted at the cursor with a button each. The
// editor's own <style> is not injected (the CSP allows no inline style without a nonce):
// config.css styles it.
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useId } from 'react';
import { PLACEHOLDERS } from '../../lib/placeholders';
import { BASIC_TOOLS, FormatToolbar } from '../../ui/format-toolbar';

const TOOLS = BASIC_TOOLS;

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
  return (
    <div className="field rich-field">
      <span id={`${id}-label`} className="field-label">
        {label}
      </span>
      <FormatToolbar editor={editor} label={`Formatting of ${label.toLowerCase()}`} tools={TOOLS} />
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
              // A click keeps the focus (and the cursor) in the text, as the toolbar's buttons do.
              onMouseDown={(e) => e.preventDefault()}
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
