import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Id, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { AvatarSource, CompanyRef, Custom, LabelInputs, Notes, TagFilter } from '../companies/schemas.js';
import { FieldParams, FieldsInput, FieldValues } from '../custom-fields/schemas.js';
import { TagRef } from '../tags/schemas.js';

export const Contact = Type.Object(
  {
    id: Type.String(),
    email: Nullable(Type.String()),
    unverified_email: Nullable(
      Type.String({
        description:
          'An address a chat widget visitor typed and nobody proved: shown to agents as unverified, never unique, ' +
          'never matched to mail (mail from the address goes to the contact whose email it is) and never mailed. ' +
          'null when there is none.',
      }),
    ),
    name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    avatar_source: AvatarSource,
    company: Nullable(CompanyRef),
    external_id: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    custom: Type.Record(Type.String(), Type.Unknown()),
    tags: Type.Array(TagRef),
    fields: FieldValues,
    blocked: Type.Boolean(),
    ticket_count: Type.Integer({ description: 'Tickets of the contact (deleted and spam tickets not counted).' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Contact' },
);

const Email = Nullable(
  Type.String({ format: 'email', maxLength: 254, description: 'Unique per workspace, case-insensitively.' }),
);
const ContactName = Nullable(Type.String({ maxLength: 200 }));
const Phone = Nullable(Type.String({ maxLength: 50 }));
const CompanyId = Nullable(Type.String({ format: 'uuid', description: 'A company of this workspace, or null.' }));
const ExternalId = Nullable(
  Type.String({ minLength: 1, maxLength: 255, description: 'Your system’s id; unique per workspace.' }),
);

const CompanyLink = Nullable(
  Type.Object(
    {
      id: Type.Optional(Type.String({ format: 'uuid' })),
      domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    },
    {
      additionalProperties: false,
      description:
        'Link by {id}, or by {domain} (the company with that domain, created with `name` when there is none); null unlinks.',
    },
  ),
);

const contactFields = {
  company: Type.Optional(CompanyLink),
  email: Type.Optional(Email),
  name: Type.Optional(ContactName),
  phone: Type.Optional(Phone),
  company_id: Type.Optional(CompanyId),
  external_id: Type.Optional(ExternalId),
  notes: Type.Optional(Notes),
  custom: Type.Optional(Custom),
  blocked: Type.Optional(Type.Boolean()),
  fields: Type.Optional(FieldsInput),
  ...LabelInputs,
};

export const CreateContactBody = Body(contactFields);
export const PatchContactBody = Body(contactFields);

export const ListContactsQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive part of the name, email or phone.' }),
    ),
    company_id: Type.Optional(Id),
    tag: Type.Optional(TagFilter),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false, patternProperties: FieldParams },
);

export const ListContactTicketsQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);
