-- Rolling a webhook endpoint's signing secret (POST /v1/webhooks/{id}/rotate-secret): the secret
-- it replaced keeps signing deliveries too, as a second v1 in SVC-Signature, until
-- previous_secret_expires_at, so a receiver can switch to the new one without losing a delivery.
-- Sealed like secret_enc (the same workspace and endpoint binding).
ALTER TABLE webhook_endpoints
  ADD COLUMN previous_secret_enc text,
  ADD COLUMN previous_secret_expires_at timestamptz;
