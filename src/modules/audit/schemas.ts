import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';

export const AuditActor = Type.Object({
  type: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('system')]),
  user: Nullable(UserRef),
  api_key_id: Nullable(Type.String()),
  contact_id: Type.Optional(
    Type.String({ description: 'The contact who acted, when a customer did (type system). Absent otherwise.' }),
  ),
});

export const AuditLog = Type.Object(
  {
    id: Type.String(),
    actor: AuditActor,
    action: Type.String(),
    entity_type: Type.String(),
    entity_id: Nullable(Type.String()),
    data: Type.Object({}, { additionalProperties: true }),
    ip: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { title: 'AuditLog' },
);

export const ListAuditLogsQuery = Type.Object(
  {
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
    action: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Exact action, e.g. member.role_changed.' }),
    ),
    actor: Type.Optional(Type.String({ format: 'uuid', description: 'A user id or an API key id.' })),
    entity_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'e.g. member, team.' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this time.' })),
  },
  { additionalProperties: false },
);
