-- Row-level security as a second wall between workspaces (src/platform/db/scope.ts,
-- docs/decisions.md "Row-level security"). Every table with a workspace_id column gets a policy
-- for the role svc_tenant: its rows are those of the workspace named by the session setting
-- app.workspace_id (none when it is unset). The service takes that role for the statements of a
-- workspace's scope; the database's own user (the tables' owner) is not subject to the policies
-- and serves the cross-tenant paths. A database user that may not create roles (some managed
-- PostgreSQL offerings) skips this migration's role and policies with a notice: the service
-- then runs with the workspace filters alone, and its start says so. Where workspace_id may be
-- null (idempotency_keys, images, inbound_emails, stripe_events) a null row belongs to no
-- workspace and stays visible.
DO $$
DECLARE
  t record;
BEGIN
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'svc_tenant') THEN
      CREATE ROLE svc_tenant NOLOGIN NOINHERIT;
    END IF;
  EXCEPTION
    WHEN insufficient_privilege THEN
      RAISE NOTICE 'svc_tenant not created (no CREATEROLE): row-level security is off';
      RETURN;
    WHEN unique_violation OR duplicate_object THEN
      NULL; -- another database of the same server created it at the same moment
  END;
  -- A superuser is a member of every role already; another user is made one (two databases of one
  -- server migrating at once may race on it: the membership being there is what counts). A user
  -- that may not (no CREATEROLE, the role made by someone else) keeps the policies in place but
  -- cannot take the role: the wall stays down until an administrator grants it.
  IF NOT pg_has_role(current_user, 'svc_tenant', 'MEMBER') THEN
    BEGIN
      EXECUTE format('GRANT svc_tenant TO %I', current_user);
    EXCEPTION
      WHEN OTHERS THEN
        IF NOT pg_has_role(current_user, 'svc_tenant', 'MEMBER') THEN
          RAISE NOTICE 'not a member of svc_tenant: row-level security is off until GRANT svc_tenant TO %', current_user;
        END IF;
    END;
  END IF;
  GRANT USAGE ON SCHEMA public TO svc_tenant;
  GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO svc_tenant;
  GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO svc_tenant;
  ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO svc_tenant;
  ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO svc_tenant;
  FOR t IN
    SELECT c.table_name, c.is_nullable = 'YES' AS nullable
    FROM information_schema.columns c
    JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
    WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND tb.table_type = 'BASE TABLE'
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t.table_name);
    -- The setting in a scalar subquery: read once per statement (an InitPlan), not once per row.
    -- A null workspace_id is a row of no workspace (a caller's idempotency key made before any
    -- workspace was chosen, a person's own picture, mail that matched no mailbox): visible to all.
    EXECUTE format(
      'CREATE POLICY tenant_wall ON %I TO svc_tenant USING (%s) WITH CHECK (%s)',
      t.table_name,
      CASE WHEN t.nullable THEN 'workspace_id IS NULL OR ' ELSE '' END
        || 'workspace_id = (SELECT nullif(current_setting(''app.workspace_id'', true), '''')::uuid)',
      CASE WHEN t.nullable THEN 'workspace_id IS NULL OR ' ELSE '' END
        || 'workspace_id = (SELECT nullif(current_setting(''app.workspace_id'', true), '''')::uuid)'
    );
  END LOOP;
END $$;
