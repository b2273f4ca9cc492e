import { Type } from '@sinclair/typebox';
import { Body, Timestamp } from '../../platform/http/schemas.js';
import { LabelColor } from '../tags/schemas.js';

/** The operators of a custom field filter (FieldOp in the OpenAPI document). */
export const FIELD_OPS = [
  'eq',
  'ne',
  'contains',
  'not_contains',
  'gt',
  'gte',
  'lt',
  'lte',
  'any',
  'all',
  'none',
  'set',
  'not_set',
] as const;

export const FIELD_TYPES = [
  'text',
  'long_text',
  'number',
  'select',
  'multi_select',
  'date',
  'checkbox',
  'url',
  'email',
  'user',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const ENTITIES = ['ticket', 'contact', 'company'] as const;
export type FieldEntity = (typeof ENTITIES)[number];

const lits = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v))));
export const FieldTypeSchema = lits(FIELD_TYPES);
export const Entity = lits(ENTITIES);

export const FieldOption = Type.Object({ id: Type.String(), label: Type.String(), color: LabelColor });

export const CustomField = Type.Object(
  {
    id: Type.String(),
    entity: Entity,
    key: Type.String(),
    name: Type.String(),
    type: FieldTypeSchema,
    options: Type.Array(FieldOption),
    required_on_solve: Type.Boolean(),
    description: Type.String(),
    position: Type.Integer(),
    archived: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'CustomField' },
);

export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
const Name = Type.String({ minLength: 1, maxLength: 60, description: '1 to 60 characters, no < or >.' });
const Description = Type.String({ maxLength: 300 });
const OptionInput = Body({
  id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      pattern: '^[a-z0-9][a-z0-9_-]*$',
      description: 'Default: slug of the label.',
    }),
  ),
  label: Type.String({ minLength: 1, maxLength: 100 }),
  color: Type.Optional(LabelColor),
});
const Options = Type.Array(OptionInput, { maxItems: 200 });

export const CreateCustomFieldBody = Body({
  entity: Entity,
  type: FieldTypeSchema,
  name: Name,
  key: Type.Optional(
    Type.String({ pattern: KEY_PATTERN, description: 'Default: slug of the name. Unique per entity; immutable.' }),
  ),
  options: Type.Optional(Options),
  required_on_solve: Type.Optional(Type.Boolean({ description: 'Tickets only.' })),
  description: Type.Optional(Description),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
});

export const PatchCustomFieldBody = Body({
  name: Type.Optional(Name),
  options: Type.Optional(Options),
  required_on_solve: Type.Optional(Type.Boolean()),
  description: Type.Optional(Description),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
  archived: Type.Optional(Type.Boolean()),
});

export const ListCustomFieldsQuery = Type.Object(
  {
    entity: Type.Optional(Entity),
    archived: Type.Optional(lits(['true', 'false', 'any'] as const)),
  },
  { additionalProperties: false },
);

export const ReorderCustomFieldsBody = Body({
  entity: Entity,
  ids: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100, uniqueItems: true }),
});

/** `fields` in a write: values by key; null, "" or [] clears a key. */
export const FieldsInput = Type.Record(
  Type.String({ minLength: 1, maxLength: 40 }),
  // One schema with a type array (the OpenAPI document's way to write nullable unions):
  // a string, number, boolean, list of option ids, or null.
  Type.Unsafe<string | number | boolean | string[] | null>({
    type: ['string', 'number', 'boolean', 'array', 'null'],
    maxLength: 10000,
    items: { type: 'string', maxLength: 100 },
    maxItems: 200,
  }),
  { maxProperties: 100, description: 'Custom field values by key, merged; null, "" or [] clears a key.' },
);

export const FieldValues = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Custom field values by key; only keys with a value appear.',
});

/** Query parameters `field.<key>` / `field.<key>[op]` of the ticket, contact and company lists. */
export const FIELD_PARAM_PATTERN = '^field\\.[a-z][a-z0-9_]{0,39}(\\[[a-z_]{1,12}\\])?$';
/** The `patternProperties` of a list's query schema that lets field filters through (as strings). */
export const FieldParams = { [FIELD_PARAM_PATTERN]: { type: 'string', maxLength: 1000 } };
