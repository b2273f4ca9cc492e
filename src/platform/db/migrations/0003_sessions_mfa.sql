-- Sessions (a session is one sign-in; its refresh token rotates on every use), two-factor
-- authentication (TOTP and single-use recovery codes) and Apple App Attest keys.

-- created_at stays the sign-in time (refresh never changes it); expires_at is the absolute end.
ALTER TABLE sessions ADD COLUMN expires_at timestamptz NOT NULL DEFAULT (now() + interval '60 days');
UPDATE sessions SET expires_at = created_at + interval '60 days';
CREATE INDEX sessions_user_used_idx ON sessions (user_id, last_used_at DESC);

-- Refresh tokens a session has already rotated away from (hash only). Presenting one again is
-- a reuse: the whole session is revoked.
CREATE TABLE session_retired_tokens (
  token_hash  text PRIMARY KEY,
  session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  retired_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_retired_tokens_session_idx ON session_retired_tokens (session_id);

-- users.mfa_secret holds the TOTP secret sealed with SECRET_KEY (pending until confirmed,
-- i.e. while mfa_enabled is false). The last accepted time step refuses a replayed code.
ALTER TABLE users ADD COLUMN mfa_last_step bigint;
ALTER TABLE users ADD COLUMN mfa_enabled_at timestamptz;

CREATE TABLE mfa_recovery_codes (
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash  text NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, code_hash)
);

-- Single-use App Attest challenges (hash only), valid five minutes.
CREATE TABLE app_attest_challenges (
  challenge_hash text PRIMARY KEY,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX app_attest_challenges_expires_idx ON app_attest_challenges (expires_at);

-- Keys attested by Apple for an instance of the native app; sign_count only ever grows.
CREATE TABLE app_attest_keys (
  key_id       text PRIMARY KEY,
  public_key   text NOT NULL,
  sign_count   bigint NOT NULL DEFAULT 0,
  environment  text NOT NULL CHECK (environment IN ('production', 'development')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
