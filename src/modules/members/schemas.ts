import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Role, Timestamp, UserRef } from '../../platform/http/schemas.js';

export const Availability = Type.Union([Type.Literal('online'), Type.Literal('away'), Type.Literal('offline')]);

/** A member's user: UserRef plus avatar_source. */
export const MemberUser = Type.Object({ ...UserRef.properties, avatar_source: Nullable(Type.String()) });

export const Member = Type.Object(
  {
    user: MemberUser,
    role: Role,
    availability: Availability,
    presence: Availability,
    max_open_tickets: Nullable(Type.Integer()),
    open_tickets: Type.Integer(),
    last_seen_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { title: 'Member' },
);

export const MemberParams = Type.Object(
  { user_id: Type.String({ maxLength: 64, description: "A member's user id, or `me`." }) },
  { additionalProperties: false },
);

export const ListMembersQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);

/** Roles this route can give: ownership moves only through POST /v1/workspace/transfer. */
export const AssignableRole = Type.Union([Type.Literal('admin'), Type.Literal('agent'), Type.Literal('viewer')]);

export const PatchMemberBody = Body({ role: AssignableRole });
