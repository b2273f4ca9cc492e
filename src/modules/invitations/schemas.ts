import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';
import { Member } from '../members/schemas.js';

export const InvitationRole = Type.Union([Type.Literal('admin'), Type.Literal('agent'), Type.Literal('viewer')]);

export const Invitation = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    role: InvitationRole,
    expires_at: Timestamp,
    created_at: Timestamp,
    invited_by: Nullable(UserRef),
  },
  { title: 'Invitation' },
);

/** The create response only: the secret token and the accept link built from it. */
export const CreatedInvitation = Type.Object(
  { ...Invitation.properties, token: Type.String(), url: Type.String() },
  { title: 'CreatedInvitation' },
);

export const CreateInvitationBody = Body({
  email: Type.String({ format: 'email', minLength: 3, maxLength: 254 }),
  role: InvitationRole,
});

export const ListInvitationsQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);

export const LookupQuery = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the accept link.' }) },
  { additionalProperties: false },
);

/** What an invitation is for, shown to whoever holds its link: nothing more. */
export const InvitationLookup = Type.Object(
  {
    workspace: Type.Object({ name: Type.String() }),
    email: Type.String(),
    role: InvitationRole,
    expires_at: Timestamp,
  },
  { title: 'InvitationLookup' },
);

export const AcceptInvitationBody = Body({ token: Type.String({ minLength: 1, maxLength: 200 }) });

export const AcceptedInvitation = Type.Object(
  {
    workspace: Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String() }),
    member: Member,
  },
  { title: 'AcceptedInvitation' },
);
