// What the composer's AI actions do to its TipTap editor (ai-composer.tsx): text streamed in as it
// arrives without filling the undo history, then the result put in as one change, so that one
// undo (Ctrl+Z, or Undo) brings back what was there before; the selection's HTML to rewrite or
// translate, and the answer put in its place.
import { closeHistory } from '@tiptap/pm/history';
import { DOMSerializer, type Fragment } from '@tiptap/pm/model';
import type { Editor, JSONContent } from '@tiptap/react';

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * What has arrived of a streamed answer, as HTML to show: HTML as it is (the editor's parser
 * takes an unfinished element as it can), plain text as paragraphs (a blank line between them).
 */
export function streamedHtml(text: string): string {
  const t = text.replace(/^\s+/, '');
  if (t.startsWith('<')) return t;
  return t
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** The editor's content now, to come back to. */
export const snapshot = (editor: Editor): JSONContent => editor.getJSON();

/** Shows `html` in the editor without an undo step (a stream's text so far). */
export function showWithoutHistory(editor: Editor, content: string | JSONContent): void {
  editor.chain().setMeta('addToHistory', false).setContent(content, { emitUpdate: false }).run();
}

/**
 * The final `html` in place of what was `before`: the editor first goes back to `before` outside
 * the history (the streamed text was never in it), then takes `html` as one change of its own,
 * which one undo takes back.
 */
export function replaceAll(editor: Editor, before: JSONContent, html: string): void {
  showWithoutHistory(editor, before);
  editor
    .chain()
    .command(({ tr }) => {
      closeHistory(tr);
      return true;
    })
    .setContent(html)
    .focus('end')
    .run();
}

/** What an AI action works on: the selection (inline when within one paragraph), or the whole text. */
export interface Target {
  from: number;
  to: number;
  /** The whole text (no selection). */
  whole: boolean;
  /** Within one paragraph: the answer goes in without a paragraph of its own. */
  inline: boolean;
  html: string;
}

function serialize(editor: Editor, fragment: Fragment): string {
  const div = document.createElement('div');
  div.append(DOMSerializer.fromSchema(editor.schema).serializeFragment(fragment));
  return div.innerHTML;
}

/** The selection, or the whole text when nothing is selected. `bodyHtml` is the whole text's HTML. */
export function targetOf(editor: Editor, bodyHtml: string): Target {
  const { state } = editor;
  const { from, to, empty, $from, $to } = state.selection;
  if (empty || state.doc.textBetween(from, to).trim() === '') {
    return { from: 0, to: state.doc.content.size, whole: true, inline: false, html: bodyHtml };
  }
  const inline = $from.sameParent($to) && $from.parent.isTextblock;
  const fragment = inline
    ? $from.parent.slice($from.parentOffset, $to.parentOffset).content
    : state.doc.slice(from, to).content;
  return { from, to, whole: false, inline, html: serialize(editor, fragment) };
}

/** An answer of one paragraph, without it (it goes inside the paragraph that was selected from). */
const unwrapParagraph = (html: string) => {
  const m = /^\s*<p>([\s\S]*)<\/p>\s*$/.exec(html);
  return m && !m[1]!.includes('<p>') ? m[1]! : html;
};

/** The answer in place of the target, as one change that one undo takes back. */
export function replaceTarget(editor: Editor, target: Target, html: string): void {
  const chain = editor.chain().command(({ tr }) => {
    closeHistory(tr);
    return true;
  });
  if (target.whole) {
    chain.setContent(html).focus('end').run();
    return;
  }
  chain
    .insertContentAt({ from: target.from, to: target.to }, target.inline ? unwrapParagraph(html) : html)
    .focus()
    .run();
}
