import { Type } from '@sinclair/typebox';
import { Body, Nullable } from '../../platform/http/schemas.js';

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 10, maxLength: 200 });

export const User = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  avatar_url: Nullable(Type.String()),
  avatar_source: Nullable(Type.String()),
  mfa_enabled: Type.Boolean(),
});

export const RegisterBody = Body({
  email: Email,
  password: Password,
  name: Type.String({ minLength: 1, maxLength: 100 }),
});

export const LoginBody = Body({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 200 }),
  challenge_token: Type.Optional(Type.String({ maxLength: 4096 })),
  app_attest: Type.Optional(Type.String({ maxLength: 16384 })),
});

export const Session = Type.Object({
  access_token: Type.String(),
  expires_in: Type.Integer(),
  token_type: Type.Literal('Bearer'),
  refresh_token: Type.Optional(Type.String()),
  user: User,
});
