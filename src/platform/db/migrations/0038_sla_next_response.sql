-- The next-response target of an SLA policy (docs/api.md "SLA policies"): minutes from a customer's
-- message on an already answered ticket to the next agent reply; null: no next-response clock.
-- The ticket's clock itself is kept in tickets.sla (next_response_due_at and its bookkeeping), and
-- its deadline in the existing due_at and sla_breach_at columns: no ticket column changes.
-- Nullable without a default: existing policies get no next-response target, and adding the
-- column rewrites no rows.
ALTER TABLE sla_policies ADD COLUMN next_response_minutes int4
  CHECK (next_response_minutes BETWEEN 1 AND 525600);
