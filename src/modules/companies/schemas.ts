import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { FieldParams, FieldsInput, FieldValues } from '../custom-fields/schemas.js';
import { TagNameList, TagRef } from '../tags/schemas.js';

/** Labels on a write, by name: tags replaces, add_tags adds, remove_tags removes. */
export const LabelInputs = {
  tags: Type.Optional(TagNameList),
  add_tags: Type.Optional(TagNameList),
  remove_tags: Type.Optional(TagNameList),
};
/** The `tag` list filter: a label name, any case. */
export const TagFilter = Type.String({ minLength: 1, maxLength: 50, description: 'A label name (any case).' });

/**
 * Free-form JSON for integrations: up to 100 keys of 1 to 100 characters (16 KB in all, checked
 * by the service). On PATCH it is merged into the stored object; a key set to null is removed.
 */
export const Custom = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  maxProperties: 100,
  propertyNames: { minLength: 1, maxLength: 100 },
  description: 'Free-form object; merged on PATCH, a null value removes its key.',
});

export const AvatarSource = Nullable(
  Type.Union([
    Type.Literal('upload'),
    Type.Literal('oauth'),
    Type.Literal('gravatar'),
    Type.Literal('domain'),
    Type.Literal('widget'),
  ]),
);

export const Company = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    domain: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    custom: Type.Record(Type.String(), Type.Unknown()),
    tags: Type.Array(TagRef),
    fields: FieldValues,
    contact_count: Type.Integer(),
    avatar_url: Nullable(Type.String()),
    avatar_source: AvatarSource,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Company' },
);

/** A contact's company, as the contact shows it. */
export const CompanyRef = Type.Object({ id: Type.String(), name: Type.String(), domain: Nullable(Type.String()) });

const CompanyName = Type.String({ minLength: 1, maxLength: 200 });
const Domain = Nullable(
  Type.String({ minLength: 1, maxLength: 253, description: 'A hostname such as example.com; stored lower-case.' }),
);
export const Notes = Nullable(Type.String({ maxLength: 10000 }));

export const CreateCompanyBody = Body({
  name: CompanyName,
  domain: Type.Optional(Domain),
  notes: Type.Optional(Notes),
  custom: Type.Optional(Custom),
  fields: Type.Optional(FieldsInput),
  ...LabelInputs,
});

export const PatchCompanyBody = Body({
  name: Type.Optional(CompanyName),
  domain: Type.Optional(Domain),
  notes: Type.Optional(Notes),
  custom: Type.Optional(Custom),
  fields: Type.Optional(FieldsInput),
  ...LabelInputs,
});

export const ListCompaniesQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive part of the name or domain.' }),
    ),
    tag: Type.Optional(TagFilter),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false, patternProperties: FieldParams },
);
