-- Labels (the API's tags) and their groups, custom fields and their values on contacts and
-- companies (tickets already have `fields`), saved views and saved replies.

CREATE TABLE tag_groups (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  color        text,
  exclusive    boolean NOT NULL DEFAULT false,
  position     int4 NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);

CREATE TABLE tags (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  color        text NOT NULL,
  description  text NOT NULL DEFAULT '',
  group_id     uuid,
  position     int4 NOT NULL DEFAULT 0,
  archived     boolean NOT NULL DEFAULT false,
  applies_to   text[] NOT NULL DEFAULT '{tickets,contacts,companies}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  -- Deleting a group keeps its labels, ungrouped.
  FOREIGN KEY (workspace_id, group_id) REFERENCES tag_groups (workspace_id, id) ON DELETE SET NULL (group_id)
);
CREATE UNIQUE INDEX tags_name_key ON tags (workspace_id, lower(name));
CREATE INDEX tags_group_idx ON tags (workspace_id, group_id) WHERE group_id IS NOT NULL;

-- Labels on records: one table per kind of record, so deleting a label (or a contact, or a
-- company) removes its rows through the foreign keys.
CREATE TABLE ticket_tags (
  workspace_id uuid NOT NULL,
  ticket_id    uuid NOT NULL,
  tag_id       uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, ticket_id, tag_id),
  FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, tag_id) REFERENCES tags (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX ticket_tags_tag_idx ON ticket_tags (workspace_id, tag_id, ticket_id);

CREATE TABLE contact_tags (
  workspace_id uuid NOT NULL,
  contact_id   uuid NOT NULL,
  tag_id       uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, contact_id, tag_id),
  FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, tag_id) REFERENCES tags (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_tags_tag_idx ON contact_tags (workspace_id, tag_id, contact_id);

CREATE TABLE company_tags (
  workspace_id uuid NOT NULL,
  company_id   uuid NOT NULL,
  tag_id       uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, company_id, tag_id),
  FOREIGN KEY (workspace_id, company_id) REFERENCES companies (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, tag_id) REFERENCES tags (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX company_tags_tag_idx ON company_tags (workspace_id, tag_id, company_id);

CREATE TABLE custom_fields (
  workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                uuid NOT NULL,
  entity            text NOT NULL CHECK (entity IN ('ticket', 'contact', 'company')),
  key               text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,39}$'),
  name              text NOT NULL,
  type              text NOT NULL CHECK (type IN ('text', 'long_text', 'number', 'select', 'multi_select', 'date',
                                                  'checkbox', 'url', 'email', 'user')),
  options           jsonb NOT NULL DEFAULT '[]',
  required_on_solve boolean NOT NULL DEFAULT false,
  description       text NOT NULL DEFAULT '',
  position          int4 NOT NULL DEFAULT 0,
  archived          boolean NOT NULL DEFAULT false,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  UNIQUE (workspace_id, entity, key)
);

-- Field values: only keys with a value are stored. jsonb_path_ops answers `fields @> {...}`
-- (eq, any, all, set) from the index.
ALTER TABLE contacts ADD COLUMN fields jsonb NOT NULL DEFAULT '{}';
ALTER TABLE companies ADD COLUMN fields jsonb NOT NULL DEFAULT '{}';
CREATE INDEX tickets_fields_idx ON tickets USING gin (fields jsonb_path_ops) WHERE deleted_at IS NULL;
CREATE INDEX contacts_fields_idx ON contacts USING gin (fields jsonb_path_ops);
CREATE INDEX companies_fields_idx ON companies USING gin (fields jsonb_path_ops);

CREATE TABLE views (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  -- Shared views are seen by every member; a personal view only by the person who made it.
  shared       boolean NOT NULL DEFAULT false,
  owner_id     uuid,
  position     int4 NOT NULL DEFAULT 0,
  filters      jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  -- A member who leaves takes their personal views along.
  FOREIGN KEY (workspace_id, owner_id) REFERENCES members (workspace_id, user_id) ON DELETE CASCADE
);
CREATE INDEX views_owner_idx ON views (workspace_id, owner_id);

CREATE TABLE saved_replies (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  title        text NOT NULL,
  shortcut     text,
  body_html    text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE UNIQUE INDEX saved_replies_shortcut_key ON saved_replies (workspace_id, lower(shortcut)) WHERE shortcut IS NOT NULL;
CREATE INDEX saved_replies_created_idx ON saved_replies (workspace_id, created_at DESC, id DESC);
