// The assistant's markdown as React elements (never as HTML: what the model writes cannot add
// markup): paragraphs, line breaks, bulleted and numbered lists, headings shown as bold lines,
// **bold**, *italic*, `code`, [links](https://…) to http(s) or this app's own addresses, and
// ticket numbers (#123) as links to their page.
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';

const INLINE =
  /(\*\*[^*\n]+\*\*|__[^_\n]+__|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)|(?<![\w&/])#\d{1,9}\b|(?<!\w)\*[^*\s][^*\n]*\*(?!\w)|(?<!\w)_[^_\s][^_\n]*_(?!\w))/g;

const safeHref = (href: string): string | null =>
  /^https?:\/\//i.test(href) || (href.startsWith('/') && !href.startsWith('//')) ? href : null;

function inline(text: string, key: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let i = 0;
  for (const m of text.matchAll(INLINE)) {
    const t = m[0];
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const k = `${key}-${i++}`;
    if (t.startsWith('**') || t.startsWith('__')) out.push(<strong key={k}>{inline(t.slice(2, -2), k)}</strong>);
    else if (t.startsWith('`')) out.push(<code key={k}>{t.slice(1, -1)}</code>);
    else if (t.startsWith('[')) {
      const [, label = '', href = ''] = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(t) ?? [];
      const safe = safeHref(href);
      if (!safe) out.push(label);
      else if (safe.startsWith('/'))
        out.push(
          <a key={k} href={safe}>
            {label}
          </a>,
        );
      else
        out.push(
          <a key={k} href={safe} target="_blank" rel="noreferrer noopener">
            {label}
          </a>,
        );
    } else if (t.startsWith('#')) {
      out.push(
        <Link key={k} to="/tickets/$number" params={{ number: t.slice(1) }}>
          {t}
        </Link>,
      );
    } else out.push(<em key={k}>{inline(t.slice(1, -1), k)}</em>);
    last = at + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Lines with <br> between them. */
function lines(text: string, key: string): ReactNode[] {
  const out: ReactNode[] = [];
  let n = 0;
  for (const l of text.split('\n')) {
    if (n > 0) out.push(<br key={`${key}br${n}`} />);
    out.push(...inline(l, `${key}.${n}`));
    n++;
  }
  return out;
}

const BULLET = /^\s*[-*+]\s+/;
const NUMBERED = /^\s*\d+[.)]\s+/;

export function Markdown({ text }: { text: string }) {
  const blocks = text.replace(/\r\n/g, '\n').split(/\n{2,}/);
  return (
    <>
      {blocks.map((block, b) => {
        const key = `b${b}`;
        const rows = block.split('\n').filter((l) => l.trim() !== '');
        if (rows.length === 0) return null;
        if (rows.every((l) => BULLET.test(l)))
          return (
            <ul key={key}>
              {rows.map((l, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a text's lines, rendered from the text alone
                <li key={`${key}-${i}`}>{inline(l.replace(BULLET, ''), `${key}-${i}`)}</li>
              ))}
            </ul>
          );
        if (rows.every((l) => NUMBERED.test(l)))
          return (
            <ol key={key}>
              {rows.map((l, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a text's lines, rendered from the text alone
                <li key={`${key}-${i}`}>{inline(l.replace(NUMBERED, ''), `${key}-${i}`)}</li>
              ))}
            </ol>
          );
        const heading = /^#{1,6}\s+(.*)$/.exec(rows[0]!);
        if (heading && rows.length === 1)
          return (
            <p key={key}>
              <strong>{inline(heading[1]!, key)}</strong>
            </p>
          );
        return <p key={key}>{lines(block.trim(), key)}</p>;
      })}
    </>
  );
}
