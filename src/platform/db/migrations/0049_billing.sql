-- Billing on the hosted offering (docs/billing.md): one account row per workspace (plan, the
-- provider's subscription as last confirmed, auto-recharge settings and state, notice marks, and
-- the AI balance as the ledger leaves it), the append-only AI ledger every balance change is an
-- entry of, and the reservations of calls under way. Amounts are micro-dollars (1 = 0.000001 USD).
CREATE TABLE billing_accounts (
  workspace_id             uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  plan                     text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro')),
  status                   text NOT NULL DEFAULT 'none' CHECK (status IN (
                             'none', 'trialing', 'active', 'past_due', 'unpaid', 'canceled',
                             'incomplete', 'incomplete_expired', 'paused')),
  interval                 text CHECK (interval IN ('month', 'year')),
  seats                    integer NOT NULL DEFAULT 0 CHECK (seats >= 0),
  current_period_end       timestamptz,
  cancel_at_period_end     boolean NOT NULL DEFAULT false,
  stripe_customer_id       text,
  stripe_subscription_id   text,
  -- A card saved through the setup-mode checkout (the provider's PaymentMethod id).
  payment_method_id        text,
  -- The balance: the month the allowance belongs to (YYYY-MM, UTC), what was granted and spent
  -- of it, and what is left of the purchased top-ups (never expire).
  allowance_month          text,
  allowance_micros         bigint NOT NULL DEFAULT 0 CHECK (allowance_micros >= 0),
  allowance_spent_micros   bigint NOT NULL DEFAULT 0 CHECK (allowance_spent_micros >= 0),
  purchased_micros         bigint NOT NULL DEFAULT 0 CHECK (purchased_micros >= 0),
  -- Auto-recharge: settings, then state (recharges counted in recharge_month).
  recharge_enabled         boolean NOT NULL DEFAULT false,
  recharge_threshold_micros bigint NOT NULL DEFAULT 2000000,
  recharge_top_ups         integer NOT NULL DEFAULT 1 CHECK (recharge_top_ups BETWEEN 1 AND 20),
  recharge_monthly_limit   integer NOT NULL DEFAULT 5 CHECK (recharge_monthly_limit BETWEEN 1 AND 30),
  recharge_month           text,
  recharges_this_month     integer NOT NULL DEFAULT 0,
  last_recharge            jsonb,
  recharge_failure         jsonb,
  -- The UTC month (YYYY-MM) ai_balance_low / ai_balance_out last went out; a top-up clears both.
  low_notice_month         text,
  out_notice_month         text,
  updated_at               timestamptz NOT NULL DEFAULT now()
);

-- Every change of the AI balance, never updated or deleted: grant (a month's allowance), expire
-- (the unspent allowance of a month that ended), top_up (a payment, once per payment_ref), charge
-- (a call: allowance first, then purchased). Amounts signed: + credits, - debits.
CREATE TABLE ai_ledger (
  workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                uuid NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('grant', 'expire', 'top_up', 'charge')),
  allowance_micros  bigint NOT NULL DEFAULT 0,
  purchased_micros  bigint NOT NULL DEFAULT 0,
  -- The month a grant or expiry is of (YYYY-MM, UTC).
  month             text,
  top_ups           integer,
  payment_ref       text,
  usage_id          uuid,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX ai_ledger_by_time ON ai_ledger (workspace_id, created_at);
-- A payment is credited once, whichever events announce it.
CREATE UNIQUE INDEX ai_ledger_payment ON ai_ledger (payment_ref) WHERE payment_ref IS NOT NULL;

-- The estimates of calls under way, held against the balance until the call settles (deleted
-- then). One left behind by a process that died stops counting after 15 minutes.
CREATE TABLE ai_reservations (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  micros        bigint NOT NULL CHECK (micros >= 0),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
