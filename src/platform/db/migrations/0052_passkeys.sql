-- Passkeys (WebAuthn): a person's credentials (public key, signature counter) and the single-use
-- ceremony challenges (5 minutes), registration ones bound to the person.
CREATE TABLE passkeys (
  id             uuid PRIMARY KEY,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id  text NOT NULL UNIQUE,
  public_key     text NOT NULL,
  counter        bigint NOT NULL DEFAULT 0,
  transports     text NOT NULL DEFAULT '[]',
  name           text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz
);
CREATE INDEX passkeys_user_idx ON passkeys (user_id);

CREATE TABLE passkey_challenges (
  id          uuid PRIMARY KEY,
  challenge   text NOT NULL,
  purpose     text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
  user_id     uuid REFERENCES users (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX passkey_challenges_expiry_idx ON passkey_challenges (expires_at);
