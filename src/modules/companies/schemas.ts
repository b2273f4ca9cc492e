import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';

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

/** Labels and custom field values arrive with a later issue: always [] and {} until then. */
export const TagsPlaceholder = Type.Array(Type.Object({ id: Type.String(), name: Type.String() }), {
  description: 'Labels (not yet available: always empty).',
});
export const FieldsPlaceholder = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Custom field values (not yet available: always empty).',
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
    tags: TagsPlaceholder,
    fields: FieldsPlaceholder,
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
});

export const PatchCompanyBody = Body({
  name: Type.Optional(CompanyName),
  domain: Type.Optional(Domain),
  notes: Type.Optional(Notes),
  custom: Type.Optional(Custom),
});

export const ListCompaniesQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive part of the name or domain.' }),
    ),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false },
);
