-- Citus readiness (docs/operations.md "Distributing by workspace", test/platform/db/citus.test.ts):
-- every tenant table's primary key leads with workspace_id, every unique index holds it, and
-- foreign keys between tenant tables carry no SET NULL action (Citus refuses one on a key that
-- holds the distribution column, citusdata/citus#7132). The data stays; only keys change.

-- Credited once per payment per workspace (a PaymentIntent names one workspace anyway).
DROP INDEX ai_ledger_payment;
CREATE UNIQUE INDEX ai_ledger_payment ON ai_ledger (workspace_id, payment_ref) WHERE payment_ref IS NOT NULL;

ALTER TABLE stripe_payments DROP CONSTRAINT stripe_payments_pkey;
ALTER TABLE stripe_payments ADD PRIMARY KEY (workspace_id, payment_intent);

-- Token hashes are of 32 random bytes: unique per workspace is unique. Where a token is looked
-- up before its workspace is known (accepting an invitation, a widget visitor's token), a plain
-- index on the hash keeps that lookup on an index (on Citus: one index scan per shard).
DROP INDEX invitations_token_key;
CREATE UNIQUE INDEX invitations_token_key ON invitations (workspace_id, token_hash);
CREATE INDEX invitations_token_hash ON invitations (token_hash);

ALTER TABLE portal_sessions DROP CONSTRAINT portal_sessions_token_hash_key;
ALTER TABLE portal_sessions ADD CONSTRAINT portal_sessions_token_hash_key UNIQUE (workspace_id, token_hash);

ALTER TABLE portal_sign_in_links DROP CONSTRAINT portal_sign_in_links_token_hash_key;
ALTER TABLE portal_sign_in_links ADD CONSTRAINT portal_sign_in_links_token_hash_key UNIQUE (workspace_id, token_hash);

ALTER TABLE widget_visitors DROP CONSTRAINT widget_visitors_token_hash_key;
ALTER TABLE widget_visitors ADD CONSTRAINT widget_visitors_token_hash_key UNIQUE (workspace_id, token_hash);
CREATE INDEX widget_visitors_token_hash ON widget_visitors (token_hash);

-- The portal's rate-limit marks had no key at all: each mark gets an id.
ALTER TABLE portal_limit_marks ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE portal_limit_marks ADD PRIMARY KEY (workspace_id, id);

-- Foreign keys that set a column to null when the row they point at goes: the deletes now clear
-- the column themselves, in the same transaction, before deleting (src/modules/companies, teams,
-- contacts, members; tag groups already did). The keys still refuse a reference to nothing.
ALTER TABLE contacts DROP CONSTRAINT contacts_workspace_id_company_id_fkey,
  ADD CONSTRAINT contacts_workspace_id_company_id_fkey
    FOREIGN KEY (workspace_id, company_id) REFERENCES companies (workspace_id, id);
ALTER TABLE tickets DROP CONSTRAINT tickets_workspace_id_assignee_id_fkey,
  ADD CONSTRAINT tickets_workspace_id_assignee_id_fkey
    FOREIGN KEY (workspace_id, assignee_id) REFERENCES members (workspace_id, user_id);
ALTER TABLE tickets DROP CONSTRAINT tickets_workspace_id_team_id_fkey,
  ADD CONSTRAINT tickets_workspace_id_team_id_fkey
    FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id);
ALTER TABLE tickets DROP CONSTRAINT tickets_workspace_id_contact_id_fkey,
  ADD CONSTRAINT tickets_workspace_id_contact_id_fkey
    FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id);
ALTER TABLE tags DROP CONSTRAINT tags_workspace_id_group_id_fkey,
  ADD CONSTRAINT tags_workspace_id_group_id_fkey
    FOREIGN KEY (workspace_id, group_id) REFERENCES tag_groups (workspace_id, id);
ALTER TABLE mailboxes DROP CONSTRAINT mailboxes_workspace_id_team_id_fkey,
  ADD CONSTRAINT mailboxes_workspace_id_team_id_fkey
    FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id);

-- mailbox_addresses is global (inbound mail is routed by the address before its workspace is
-- known; on Citus a reference table, which may not point at a distributed table): deleting a
-- mailbox deletes its addresses itself (src/modules/mailboxes/service.ts). The key to its
-- workspace stays (workspaces is global too); mailbox_addresses_mailbox_idx serves that delete.
ALTER TABLE mailbox_addresses DROP CONSTRAINT mailbox_addresses_workspace_id_mailbox_id_fkey;
