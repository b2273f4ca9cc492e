// A customer's message in the agent's language, on request (docs/app.md "AI"): "Translate" beside
// "View original" shows the message translated into the browser's language, said above it ("Translated
// from French"), and "Show original" brings the original back; both stay one click apart. Shown
// only while AI is on, on messages from the customer.
import { type ReactNode, useState } from 'react';
import { agentLanguage, aiErrorText, languageName, sameLanguage, useAiOn, useMessageTranslation } from '../../data/ai';
import type { Message } from '../../lib/api';
import { askAgain } from '../../lib/queries';

export interface MessageTranslation {
  offered: boolean;
  shown: boolean;
  toggle(): void;
  /** The body to show: the translation once it is there and shown, else the original. */
  html: string;
  note: ReactNode;
}

export function useTranslatedMessage(ws: string, m: Message): MessageTranslation {
  const offered = useAiOn(ws) && m.direction === 'inbound' && m.kind !== 'note';
  const [shown, setShown] = useState(false);
  const target = agentLanguage();
  // Named by its language alone ("English", not "American English").
  const into = languageName(target.split('-')[0]!);
  const q = useMessageTranslation(ws, m.id, m.body_html, target, offered && shown);
  const t = shown ? q.data : undefined;
  const same = t?.source_language ? sameLanguage(t.source_language, target) : false;
  let note: ReactNode = null;
  if (offered && shown) {
    note = q.error ? (
      <p className="error" role="alert">
        Could not translate the message: {aiErrorText(q.error)}{' '}
        <button type="button" className="link" onClick={askAgain(q)}>
          Try again
        </button>
      </p>
    ) : !t ? (
      <p className="hint" role="status">
        Translating into {into}…
      </p>
    ) : (
      <p className="hint ai-translated" role="status">
        {same
          ? `Already in ${into}.`
          : `Translated from ${t.source_language ? languageName(t.source_language) : 'another language'} into ${into} by AI.`}
      </p>
    );
  }
  return {
    offered,
    shown,
    toggle: () => setShown((s) => !s),
    html: t?.html && !same ? t.html : m.body_html,
    note,
  };
}

/** "Translate" / "Show original" in the message's header. */
export function TranslateButton({ tr }: { tr: MessageTranslation }) {
  if (!tr.offered) return null;
  return (
    <button type="button" className="link-button" onClick={tr.toggle}>
      {tr.shown ? 'Show original' : 'Translate'}
    </button>
  );
}
