import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../platform/http/context.js';
import { Body, Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';

export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)));

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  scopes: Type.Array(ScopeSchema),
  created_by: Nullable(UserRef),
  expires_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  created_at: Timestamp,
});

export const CreatedApiKey = Type.Intersect([ApiKey, Type.Object({ key: Type.String() })]);

export const CreateApiKeyBody = Body({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
});
