-- Stripe's side of billing (src/modules/billing/stripe, docs/billing.md "Connecting Stripe").
--
-- Every verified webhook event, by Stripe's event id: an id is processed at most once (a replay,
-- or Stripe's retry of an event already acted on, answers 2xx and changes nothing).
CREATE TABLE stripe_events (
  id           text PRIMARY KEY,
  type         text NOT NULL,
  -- The workspace the event named (its metadata), when it named one that exists.
  workspace_id uuid REFERENCES workspaces (id) ON DELETE SET NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);

-- Every payment credited to a workspace's AI balance, by its PaymentIntent: a payment is
-- credited once, whichever events announce it (checkout.session.completed,
-- payment_intent.succeeded, the recharge's own answer) and in whatever order.
CREATE TABLE stripe_payments (
  payment_intent text PRIMARY KEY,
  workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind           text NOT NULL CHECK (kind IN ('top_up', 'recharge')),
  top_ups        integer NOT NULL CHECK (top_ups > 0),
  amount         integer,
  currency       text,
  credited_at    timestamptz NOT NULL DEFAULT now()
);

-- Auto-recharge payments, numbered per workspace and UTC month: at most one in flight per
-- workspace (the partial unique index), at most monthly_limit that did not fail a month.
CREATE TABLE stripe_recharges (
  workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- The UTC month, YYYY-MM.
  month          text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  seq            integer NOT NULL,
  status         text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  top_ups        integer NOT NULL CHECK (top_ups > 0),
  payment_intent text,
  amount         integer,
  currency       text,
  failure_code   text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  finished_at    timestamptz,
  PRIMARY KEY (workspace_id, month, seq)
);
CREATE UNIQUE INDEX stripe_recharges_one_pending ON stripe_recharges (workspace_id) WHERE status = 'pending';
CREATE INDEX stripe_recharges_payment_intent ON stripe_recharges (payment_intent) WHERE payment_intent IS NOT NULL;
