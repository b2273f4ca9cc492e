-- Contacts (the people who write in) and companies (what they belong to). Labels and custom
-- field values arrive with a later migration. `custom` is free-form JSON for integrations.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE companies (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  name          text NOT NULL,
  -- Lower-case hostname; unique within the workspace.
  domain        text CHECK (domain = lower(domain)),
  notes         text,
  custom        jsonb NOT NULL DEFAULT '{}',
  avatar_url    text,
  avatar_source text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE UNIQUE INDEX companies_domain_key ON companies (workspace_id, domain) WHERE domain IS NOT NULL;
CREATE INDEX companies_created_idx ON companies (workspace_id, created_at DESC, id DESC);
-- q: case-insensitive substring of name or domain.
CREATE INDEX companies_name_trgm_idx ON companies USING gin (name gin_trgm_ops);
CREATE INDEX companies_domain_trgm_idx ON companies USING gin (domain gin_trgm_ops);

CREATE TABLE contacts (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  -- Stored as given; unique case-insensitively.
  email         text,
  name          text,
  phone         text,
  company_id    uuid,
  external_id   text,
  notes         text,
  custom        jsonb NOT NULL DEFAULT '{}',
  blocked       boolean NOT NULL DEFAULT false,
  avatar_url    text,
  avatar_source text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  -- Deleting a company clears only company_id (a plain SET NULL would null workspace_id too).
  FOREIGN KEY (workspace_id, company_id) REFERENCES companies (workspace_id, id) ON DELETE SET NULL (company_id)
);
CREATE UNIQUE INDEX contacts_email_key ON contacts (workspace_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX contacts_external_id_key ON contacts (workspace_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX contacts_created_idx ON contacts (workspace_id, created_at DESC, id DESC);
-- company_id filter, contact_count, and the SET NULL on company deletion.
CREATE INDEX contacts_company_idx ON contacts (workspace_id, company_id, created_at DESC, id DESC)
  WHERE company_id IS NOT NULL;
-- q: case-insensitive substring of name, email or phone.
CREATE INDEX contacts_name_trgm_idx ON contacts USING gin (name gin_trgm_ops);
CREATE INDEX contacts_email_trgm_idx ON contacts USING gin (email gin_trgm_ops);
CREATE INDEX contacts_phone_trgm_idx ON contacts USING gin (phone gin_trgm_ops);
