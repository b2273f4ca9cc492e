import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';

/** A shortcut: a short token an agent types to insert the reply (unique per workspace, any case). */
export const SHORTCUT_PATTERN = '^[A-Za-z0-9_-]{1,50}$';

export const SavedReply = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    shortcut: Nullable(Type.String()),
    body_html: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SavedReply' },
);

const Title = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters, trimmed.' });
const Shortcut = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 50,
    pattern: SHORTCUT_PATTERN,
    description: 'Letters, digits, - and _ (1 to 50); unique in the workspace ignoring case; null for none.',
  }),
);
const SavedReplyHtml = Type.String({
  minLength: 1,
  maxLength: 100_000,
  description: 'HTML, sanitized with an allowlist before storage; must not be empty once sanitized.',
});

export const CreateSavedReplyBody = Body({
  title: Title,
  shortcut: Type.Optional(Shortcut),
  body_html: SavedReplyHtml,
});

export const PatchSavedReplyBody = Body({
  title: Type.Optional(Title),
  shortcut: Type.Optional(Shortcut),
  body_html: Type.Optional(SavedReplyHtml),
});

export const ListSavedRepliesQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Part of the title or the shortcut (any case).' }),
    ),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false },
);
