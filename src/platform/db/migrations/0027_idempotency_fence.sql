-- An Idempotency-Key is bound to the writes it guards, in their own transaction
-- (src/platform/http/idempotency.ts, src/platform/db/tx.ts):
--   claim      the claim's random token; a retry that takes a dead request's key over changes it,
--              so the dead (or only slow) request's transaction can no longer commit under the key;
--   results    what each committed transaction of the request returned (sealed, like body), so a
--              retry after a crash between COMMIT and the stored answer rebuilds that answer
--              instead of writing again;
--   state      committed: writes committed, answer not stored yet.
ALTER TABLE idempotency_keys ADD COLUMN claim text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN results text;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check
  CHECK (state IN ('running', 'committed', 'done'));
