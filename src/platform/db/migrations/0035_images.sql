-- Pictures (src/modules/images, docs/images.md): every processed picture (avatars of users,
-- contacts and companies, the workspace's logo and brand images) under a random (v4) id that is
-- never reused. The bytes (a 256 and a 64 px PNG) are in the storage layer under images/; this row says
-- which picture they belong to and, once it was replaced or removed, since when: a job removes
-- the bytes and the row a cache horizon later (docs/images.md "Removal").
--
-- Not a tenant table: a user's picture belongs to no one workspace, and serving reads nothing
-- but the storage. workspace_id says whose it is where there is one.
CREATE TABLE images (
  id           uuid PRIMARY KEY,
  owner_kind   text NOT NULL CHECK (owner_kind IN ('user', 'contact', 'company', 'workspace')),
  owner_id     uuid NOT NULL,
  workspace_id uuid,
  -- upload, oauth, gravatar, domain, widget (AvatarSource)
  source       text NOT NULL,
  -- The two PNGs' sizes in bytes (Content-Length when served).
  bytes_256    int4 NOT NULL,
  bytes_64     int4 NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- Set when another picture replaced it or it was removed; null while in use.
  retired_at   timestamptz
);

-- The removal job's scan: retired pictures, oldest first.
CREATE INDEX images_retired ON images (retired_at) WHERE retired_at IS NOT NULL;
