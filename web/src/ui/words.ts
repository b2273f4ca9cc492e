// The app's small words, said one way everywhere: a count with its noun (plural by the language's
// rules, Intl.PluralRules, not by `n === 1`), the one name of a customer who gave neither a name
// nor an address (a chat visitor), and a CSAT rating in words.

// The app's words are English: their plural forms follow English's rules.
const rules = new Intl.PluralRules('en');
const numbers = new Intl.NumberFormat('en');

/** "1 ticket", "2 tickets", "1,204 tickets"; `other` for irregular plurals ("companies"). */
export function count(n: number, one: string, other = `${one}s`): string {
  return `${numbers.format(n)} ${rules.select(n) === 'one' ? one : other}`;
}

/** The noun alone for a count ("ticket" or "tickets"), when the number is shown apart. */
export function noun(n: number, one: string, other = `${one}s`): string {
  return rules.select(n) === 'one' ? one : other;
}

/** What a contact is called when it has neither a name nor an email address (a chat visitor). */
export const VISITOR = 'Visitor';

/** A contact's name as the app shows it: the name, else the email address, else "Visitor". */
export function contactName(c: { name?: string | null; email?: string | null } | null | undefined): string {
  return c?.name?.trim() || c?.email?.trim() || VISITOR;
}

/** The CSAT page's words for each score (src/modules/csat/page.ts). */
const RATING = ['', 'Very unhappy', 'Unhappy', 'Neutral', 'Happy', 'Very happy'];

/** A CSAT score as words: "5 out of 5 (Very happy)". */
export function ratingText(score: number): string {
  const label = RATING[Math.round(score)];
  return `${score} out of 5${label ? ` (${label})` : ''}`;
}
