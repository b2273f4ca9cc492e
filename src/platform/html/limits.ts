// The limits of src/platform/html, in one place so that callers and docs can name them.

export const HTML_LIMITS = {
  /**
   * The largest HTML (or plain text) input these functions are meant for, as JavaScript string
   * length (UTF-16 code units). Enforcing it is the CALLER's job (the API schema, the inbound
   * mail parser): the functions here do not check it and take time linear in their input. A body
   * of at most 1 MiB of UTF-8 is never longer than this, since every UTF-8 byte sequence decodes
   * to at most as many UTF-16 code units as it has bytes.
   */
  maxInputLength: 1_048_576,
  /**
   * Elements nested deeper than this are unwrapped by sanitizeHtml (the tag is dropped, its text
   * kept) and ignored by htmlToText. It bounds the depth the browser has to lay out and keeps the
   * recursive walk of html-to-text far from the stack limit. Real mail, nested tables included,
   * stays well below it.
   */
  maxNestingDepth: 100,
  /**
   * How much stack walking (guard.ts) an input may cost htmlparser2 before sanitizeHtml and
   * htmlToText stop treating it as markup and keep only its text. Real mail stays far below
   * (1 MiB of nested tables, 60 deep: a few million); at the budget the parse takes tens of
   * milliseconds, where 1 MiB of unclosed tags would take about a minute.
   */
  parserWorkBudget: 20_000_000,
  /** The default length of preview(), in code points, the "…" included. */
  previewLength: 200,
} as const;
