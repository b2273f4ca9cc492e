import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Timestamp } from '../../platform/http/schemas.js';

export const Team = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    private: Type.Boolean(),
    member_ids: Type.Array(Type.String()),
    created_at: Timestamp,
  },
  { title: 'Team' },
);

const TeamName = Type.String({ minLength: 1, maxLength: 100 });
const MemberIds = Type.Array(Type.String({ format: 'uuid' }), {
  maxItems: 1000,
  uniqueItems: true,
  description: 'User ids of workspace members; replaces the whole list.',
});

export const CreateTeamBody = Body({
  name: TeamName,
  private: Type.Optional(Type.Boolean({ default: false })),
  member_ids: Type.Optional(MemberIds),
});

export const PatchTeamBody = Body({
  name: Type.Optional(TeamName),
  private: Type.Optional(Type.Boolean()),
  member_ids: Type.Optional(MemberIds),
});

export const ListTeamsQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);
