import { Type } from '@sinclair/typebox';
import { Body, Nullable, Role, Timestamp } from '../../platform/http/schemas.js';

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

/** Standard base64 (App Attest key ids, attestation and assertion objects). */
const base64 = (minLength: number, maxLength: number, description: string) =>
  Type.String({ minLength, maxLength, pattern: '^[A-Za-z0-9+/]+={0,2}$', description });

/** An App Attest key id: base64 of the SHA-256 of the key (44 characters). */
export const AppAttestKeyId = Type.String({
  pattern: '^[A-Za-z0-9+/]{43}=$',
  description: 'The key identifier from DCAppAttestService.generateKey (base64).',
});
export const AppAttestChallengeText = Type.String({
  minLength: 16,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'A challenge from POST /v1/auth/app-attest/challenge.',
});

export const AppAttestProof = Type.Object(
  {
    key_id: AppAttestKeyId,
    challenge: AppAttestChallengeText,
    assertion: base64(16, 4096, 'generateAssertion(key_id, clientDataHash: SHA256(UTF-8 bytes of challenge)), base64.'),
  },
  {
    additionalProperties: false,
    description: 'A device proof from the native iPhone app, in place of challenge_token.',
  },
);

const ChallengeToken = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'The human-verification token (Turnstile or hCaptcha) when the server asks for one.',
});

export const RegisterBody = Body({
  email: Email,
  password: Password,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  challenge_token: Type.Optional(ChallengeToken),
  app_attest: Type.Optional(AppAttestProof),
});

export const LoginBody = Body({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 200 }),
  challenge_token: Type.Optional(ChallengeToken),
  app_attest: Type.Optional(AppAttestProof),
});

export const Session = Type.Object({
  access_token: Type.String(),
  expires_in: Type.Integer(),
  token_type: Type.Literal('Bearer'),
  refresh_token: Type.Optional(Type.String({ description: 'Native clients only (no cookie).' })),
  user: User,
});

export const MfaRequired = Type.Object({
  mfa_required: Type.Literal(true),
  mfa_token: Type.String({ description: 'Send to POST /v1/auth/mfa with the code; valid 5 minutes.' }),
});

export const LoginResult = Type.Union([Session, MfaRequired]);

/** A TOTP code (6 digits) or a recovery code (four dash-separated groups of five hex digits). */
export const MfaCode = Type.String({
  minLength: 6,
  maxLength: 64,
  description: 'A 6-digit code from the authenticator app, or an unused recovery code.',
});

export const MfaBody = Body({
  mfa_token: Type.String({ minLength: 1, maxLength: 4096 }),
  code: MfaCode,
});

const RefreshToken = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'Native clients only: the refresh token from the body of the last sign-in or refresh.',
});

export const RefreshBody = Body({
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Refresh this account only.' })),
  refresh_token: Type.Optional(RefreshToken),
});

export const LogoutBody = Body({
  all: Type.Optional(Type.Boolean({ description: 'Sign out of every account of this browser.' })),
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Sign out of this account.' })),
  refresh_token: Type.Optional(RefreshToken),
});

export const EmptyBody = Body({});

export const AccountWorkspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  role: Role,
});

export const Accounts = Type.Object({
  data: Type.Array(
    Type.Object({
      user: User,
      workspaces: Type.Array(AccountWorkspace),
      last_used_at: Timestamp,
      /** The account a refresh without user_id would pick (the most recently used). */
      current: Type.Boolean(),
    }),
  ),
});

export const AppAttestChallenge = Type.Object({ challenge: Type.String(), expires_at: Timestamp });

export const AppAttestKeyBody = Body({
  key_id: AppAttestKeyId,
  attestation: base64(16, 16384, 'attestKey(key_id, clientDataHash: SHA256(UTF-8 bytes of challenge)), base64.'),
  challenge: AppAttestChallengeText,
});

export const AppAttestKey = Type.Object({
  key_id: Type.String(),
  environment: Type.Union([Type.Literal('production'), Type.Literal('development')]),
  created_at: Timestamp,
});

export const TotpEnrolment = Type.Object({
  secret: Type.String({ description: 'Base32; shown once. Pending until confirmed.' }),
  otpauth_url: Type.String(),
});

export const RecoveryCodes = Type.Object({ recovery_codes: Type.Array(Type.String()) });

export const CodeBody = Body({ code: MfaCode });

export const PasswordBody = Body({
  current_password: Type.String({ minLength: 1, maxLength: 200 }),
  new_password: Password,
});
