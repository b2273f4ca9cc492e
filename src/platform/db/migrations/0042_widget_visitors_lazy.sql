-- The chat widget's visitors without a contact, and emails nobody proved (issue 32, docs/widget.md
-- "Visitor tokens", docs/decisions.md "Chat widget").
--
-- A session alone makes no contact: a visitor becomes one when they first write or give an email.
-- Until then their token's row holds the id their contact will have (pending_contact_id: the
-- session's contact id and socket topic do not change when it is made) and the name they gave.
-- Rows of visitors who never wrote are removed after 30 days without a visit (the partial index).
ALTER TABLE widget_visitors ALTER COLUMN contact_id DROP NOT NULL;
ALTER TABLE widget_visitors ADD COLUMN pending_contact_id uuid;
ALTER TABLE widget_visitors ADD COLUMN name text;
ALTER TABLE widget_visitors ADD CONSTRAINT widget_visitors_contact_check
  CHECK ((contact_id IS NULL) <> (pending_contact_id IS NULL));
CREATE INDEX widget_visitors_anonymous_idx ON widget_visitors (last_seen_at) WHERE contact_id IS NULL;

-- An address a chat visitor typed: a claim, not the contact's email. It is never unique, never
-- matched to mail (real mail from the address finds or makes the contact whose `email` it is),
-- and agents see it marked unverified.
ALTER TABLE contacts ADD COLUMN unverified_email text;
