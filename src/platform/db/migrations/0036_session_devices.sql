-- Where a session is used, for the person's own list of sessions (GET /v1/me/sessions): the
-- User-Agent and the client address of the sign-in, updated on every refresh (the latest one
-- wins). Both are what the client sent, cut to a bounded length; null for sessions started before
-- this migration and for requests that sent none. They go with the session (deleted a week after
-- it ends, sessions.ts) and are shown to no one but the session's own person.
ALTER TABLE sessions ADD COLUMN user_agent text, ADD COLUMN ip text;
