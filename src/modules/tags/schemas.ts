import { Type } from '@sinclair/typebox';
import { Body, Id, Nullable, Timestamp } from '../../platform/http/schemas.js';

/** The 15 label colours, in the spec's order (a default colour is an index into this list). */
export const LABEL_COLORS = [
  'gray',
  'red',
  'orange',
  'amber',
  'yellow',
  'lime',
  'green',
  'teal',
  'cyan',
  'blue',
  'indigo',
  'violet',
  'purple',
  'pink',
  'rose',
] as const;
export type LabelColorName = (typeof LABEL_COLORS)[number];

/** The kinds of records a label may be applied to (`applies_to`). */
export const TAG_KINDS = ['tickets', 'contacts', 'companies'] as const;
export type TagKind = (typeof TAG_KINDS)[number];

const lits = <T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

export const LabelColor = lits(LABEL_COLORS, { title: 'LabelColor' });
const Kind = lits(TAG_KINDS);

/**
 * Letters and marks of any script, digits, spaces and `- _ . / : & + #`. The service checks the
 * same rule again after trimming (and for names sent with records' tags / add_tags / remove_tags).
 */
export const TAG_NAME_PATTERN = '^[\\p{L}\\p{M}\\p{N} \\-_./:&+#]+$';

export const TagName = Type.String({
  minLength: 1,
  maxLength: 50,
  pattern: TAG_NAME_PATTERN,
  description:
    'Letters (any script), digits, spaces and - _ . / : & + #; trimmed; unique in the workspace ignoring case.',
});

/** Label names on a record (`tags`, `add_tags`, `remove_tags` of tickets, contacts and companies). */
export const TagNameList = Type.Array(
  Type.String({ minLength: 1, maxLength: 50, description: 'A label name (case-insensitive).' }),
  { maxItems: 50 },
);

export const TagRef = Type.Object(
  { id: Type.String(), name: Type.String(), color: LabelColor, group_id: Nullable(Type.String()) },
  { title: 'TagRef' },
);

export const Tag = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    color: LabelColor,
    group_id: Nullable(Type.String()),
    position: Type.Integer(),
    archived: Type.Boolean({ description: 'Archived labels stay on records but cannot be newly applied.' }),
    applies_to: Type.Array(Kind),
    usage: Type.Object(
      {
        tickets: Type.Integer({ description: 'Tickets carrying the label (deleted tickets not counted).' }),
        contacts: Type.Integer(),
        companies: Type.Integer(),
      },
      { description: 'How many records carry the label.' },
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Tag' },
);

export const TagList = Type.Object({ data: Type.Array(Tag) });

const Description = Type.String({ maxLength: 300 });
const GroupId = Nullable(Type.String({ format: 'uuid', description: 'A label group of this workspace, or null.' }));
const AppliesTo = Type.Array(Kind, {
  minItems: 1,
  uniqueItems: true,
  description: 'Which records may carry the label (default all three).',
});
export const Position = Type.Integer({ minimum: 0, maximum: 1_000_000 });

export const CreateTagBody = Body({
  name: TagName,
  color: Type.Optional(LabelColor),
  description: Type.Optional(Description),
  group_id: Type.Optional(GroupId),
  applies_to: Type.Optional(AppliesTo),
  position: Type.Optional(Position),
});

export const PatchTagBody = Body({
  name: Type.Optional(TagName),
  color: Type.Optional(LabelColor),
  description: Type.Optional(Description),
  group_id: Type.Optional(GroupId),
  applies_to: Type.Optional(AppliesTo),
  position: Type.Optional(Position),
  archived: Type.Optional(Type.Boolean()),
});

export const ListTagsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Part of the name, ignoring case.' })),
    group_id: Type.Optional(
      Type.String({
        pattern: '^(?:none|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$',
        description: 'A group id, or `none` for labels without a group.',
      }),
    ),
    archived: Type.Optional(lits(['true', 'false', 'any'] as const, { default: 'any' })),
    applies_to: Type.Optional(Kind),
  },
  { additionalProperties: false },
);

export const MergeTagBody = Body({ into: Type.String({ format: 'uuid', description: 'The label that remains.' }) });

/** Reorder: every id of the workspace's labels (or groups) exactly once; position becomes the index. */
export const ReorderBody = (maxItems: number) =>
  Body({
    ids: Type.Array(Id, {
      maxItems,
      uniqueItems: true,
      description: 'Every id exactly once, in the new order.',
    }),
  });
