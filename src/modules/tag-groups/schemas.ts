import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { LabelColor } from '../tags/schemas.js';

export const TagGroup = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    color: Nullable(LabelColor),
    exclusive: Type.Boolean({ description: 'At most one label of the group per record.' }),
    position: Type.Integer(),
    tag_count: Type.Integer({ description: 'Labels in the group (archived ones included).' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'TagGroup' },
);

export const TagGroupList = Type.Object({ data: Type.Array(TagGroup) });

const GroupName = Type.String({
  minLength: 1,
  maxLength: 50,
  description: 'Trimmed; unique in the workspace ignoring case.',
});

export const CreateTagGroupBody = Body({
  name: GroupName,
  color: Type.Optional(Nullable(LabelColor)),
  exclusive: Type.Optional(Type.Boolean({ default: false })),
});

export const PatchTagGroupBody = Body({
  name: Type.Optional(GroupName),
  color: Type.Optional(Nullable(LabelColor)),
  exclusive: Type.Optional(Type.Boolean()),
});
