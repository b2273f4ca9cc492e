-- OAuth sign-in (Google, Microsoft; src/modules/auth/oauth). docs/auth.md "OAuth sign-in".
--
-- A person's linked provider accounts, by the provider's stable subject (never by email: an
-- address can change hands at the provider).
CREATE TABLE oauth_identities (
  id         uuid PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  provider   text NOT NULL CHECK (provider IN ('google', 'microsoft')),
  subject    text NOT NULL,
  email      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (provider, subject)
);
CREATE INDEX oauth_identities_user ON oauth_identities (user_id);

-- Whether the person chose a password (a person registered through OAuth has none: its hash is
-- of a random secret nobody knows). Unlinking the last identity of such a person is refused.
ALTER TABLE users ADD COLUMN has_password boolean NOT NULL DEFAULT true;

-- A started sign-in: state (hashed), bound to the browser by a cookie (hashed), with the nonce
-- and the PKCE verifier sent to the provider. Single use, 10 minutes.
CREATE TABLE oauth_sign_in_flows (
  state_hash     text PRIMARY KEY,
  browser_hash   text,
  provider       text NOT NULL,
  nonce          text NOT NULL,
  code_verifier  text NOT NULL,
  native         boolean NOT NULL,
  -- client=native: the app's own S256 code_challenge, checked at POST /v1/auth/oauth/exchange.
  app_challenge  text,
  -- ?link=1 while signed in: the person the identity is linked to.
  link_user_id   uuid REFERENCES users (id) ON DELETE CASCADE,
  expires_at     timestamptz NOT NULL
);

-- The one-time code a native app exchanges for a session (60 seconds).
CREATE TABLE oauth_exchange_codes (
  code_hash     text PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  app_challenge text NOT NULL,
  expires_at    timestamptz NOT NULL
);
