-- What a member chose not to be told about in this workspace (GET and PATCH
-- /v1/notifications/settings): notification types that are not created for them.
ALTER TABLE members ADD COLUMN notifications_muted text[] NOT NULL DEFAULT '{}';
