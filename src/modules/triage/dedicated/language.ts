// The language of a ticket, by franc-min (the 82 most spoken languages, trigram profiles), its
// ISO 639-3 code mapped to the two-letter BCP 47 tag by iso-639-3's table. Too little text or a
// language without a two-letter code: no decision. franc's score is a distance, not a
// probability, so the decision has neither probability nor confidence (it is stored in
// custom.language whatever the threshold, apply.ts).
import { franc } from 'franc-min';
import { iso6393 } from 'iso-639-3';

const TAG = new Map(iso6393.filter((l) => l.iso6391).map((l) => [l.iso6393, l.iso6391!]));
const MIN_CHARS = 20;

/** The BCP 47 tag of the text's language, or null when it cannot tell. */
export function detectLanguage(text: string): string | null {
  const t = text.trim();
  if (t.length < MIN_CHARS) return null;
  const code = franc(t.slice(0, 2_000), { minLength: MIN_CHARS });
  return code === 'und' ? null : (TAG.get(code) ?? null);
}
