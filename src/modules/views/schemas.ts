import { Type } from '@sinclair/typebox';
import { Body, Timestamp } from '../../platform/http/schemas.js';
import { FIELD_OPS } from '../custom-fields/schemas.js';
import { Channel, Priority, STATUSES, Status } from '../tickets/schemas.js';

export const FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
/** A label name as the labels module allows it: letters, digits, spaces and - _ . / : & + #. */
export const TAG_NAME_PATTERN = '^[\\p{L}\\p{N} _./:&+#-]{1,50}$';
export const MAX_FIELD_FILTERS = 20;

const Uuid = Type.String({ format: 'uuid' });
const FilterText = Type.String({ minLength: 1, maxLength: 2000 });

export const FieldOp = Type.Union(
  FIELD_OPS.map((op) => Type.Literal(op)),
  { description: 'eq, ne, contains, not_contains, gt, gte, lt, lte, any, all, none, set, not_set.' },
);

export const FieldFilter = Type.Object(
  {
    key: Type.String({ pattern: FIELD_KEY_PATTERN, maxLength: 40, description: 'A ticket custom field key.' }),
    op: FieldOp,
    value: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 2000 }),
          Type.Number(),
          Type.Boolean(),
          Type.Array(FilterText, { minItems: 1, maxItems: 200 }),
        ],
        {
          description:
            'A string, number, boolean, or list of strings; any, all and none take a list; set and not_set take none.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ViewFiltersSchema = Type.Object(
  {
    status: Type.Optional(Type.Array(Status, { minItems: 1, maxItems: STATUSES.length, uniqueItems: true })),
    priority: Type.Optional(Type.Array(Priority, { minItems: 1, maxItems: 4, uniqueItems: true })),
    assignee: Type.Optional(
      Type.Union([Type.Literal('me'), Type.Literal('none'), Uuid], {
        description: 'me (whoever looks at the view), none, or a user id.',
      }),
    ),
    team_id: Type.Optional(Uuid),
    mailbox_id: Type.Optional(Uuid),
    tag: Type.Optional(
      Type.String({ pattern: TAG_NAME_PATTERN, minLength: 1, maxLength: 50, description: 'A label name.' }),
    ),
    channel: Type.Optional(Channel),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Text search, as GET /v1/tickets q.' })),
    fields: Type.Optional(
      Type.Array(FieldFilter, {
        maxItems: MAX_FIELD_FILTERS,
        description: 'Custom field conditions on tickets, all of which must hold.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ViewFilters',
    description: 'The ticket list filters a view applies (GET /v1/tickets?view_id=…); every one optional.',
  },
);

export const View = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    shared: Type.Boolean({ description: 'Seen by every member; false: only by the person who made it.' }),
    position: Type.Integer(),
    filters: ViewFiltersSchema,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'View' },
);

const ViewName = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters, trimmed.' });
const Position = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Default: after every other view.' });

export const CreateViewBody = Body({
  name: ViewName,
  shared: Type.Optional(
    Type.Boolean({ description: 'Default false for a person (a personal view), true for an API key.' }),
  ),
  position: Type.Optional(Position),
  filters: Type.Optional(ViewFiltersSchema),
});

export const PatchViewBody = Body({
  name: Type.Optional(ViewName),
  shared: Type.Optional(Type.Boolean()),
  position: Type.Optional(Position),
  filters: Type.Optional(ViewFiltersSchema),
});

export const ViewList = Type.Object({ data: Type.Array(View) });
