// The second wall between workspaces (docs/decisions.md "Row-level security"): every tenant
// table has a PostgreSQL policy that lets the role TENANT_ROLE see and write only the rows of
// the workspace named by the session setting `app.workspace_id`. A statement run while a
// workspace is in scope (a request that named its workspace, a Writer.run unit) runs as that
// role with that setting, so a query that forgot its `workspace_id` filter still reads and
// writes nothing of another workspace. Statements run out of any scope (sign-in, inbound routing,
// sweepers, pg-boss, migrations) run as the database's own user, the documented cross-tenant
// paths.
//
// The scope is carried by AsyncLocalStorage; the database layer (index.ts, pglite-dialect.ts)
// switches a connection's role and setting before a statement whose scope differs from the
// connection's (one extra round trip, only on a change).
import { AsyncLocalStorage } from 'node:async_hooks';

/** The role the policies apply to; the service's own user is made a member of it (migration 0056). */
export const TENANT_ROLE = 'svc_tenant';

/** A request's scope: its workspace, once known (set by authorization, platform/http/auth.ts). */
export interface Scope {
  workspaceId: string | null;
}

const scopes = new AsyncLocalStorage<Scope>();

/** The workspace in scope, or null (the statement runs as the database's own user). */
export function currentWorkspace(): string | null {
  return scopes.getStore()?.workspaceId ?? null;
}

/** Runs `fn` with `workspaceId` in scope. */
export function withWorkspace<T>(workspaceId: string, fn: () => T): T {
  return scopes.run({ workspaceId }, fn);
}

/** Runs `fn` with no workspace in scope: a path that reads or writes across workspaces by design. */
export function unscoped<T>(fn: () => T): T {
  return scopes.exit(fn);
}

/** Runs `fn` inside `scope`, an object whose workspace may be set later (a request's). */
export function runInScope<T>(scope: Scope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The statement that moves a connection to the scope's role and workspace (parameters: role, workspace). */
export const SWITCH_SQL = "select set_config('role', $1, false), set_config('app.workspace_id', $2, false)";

/** What a connection must be switched to for `workspaceId`: [role, setting]. */
export function switchValues(workspaceId: string | null): [string, string] {
  return workspaceId === null ? ['none', ''] : [TENANT_ROLE, workspaceId];
}

/**
 * Whether a database's wall is up: the role exists and the service's user may take it (checked
 * after migrations, `raiseWall` in index.ts; a database user that may not create roles runs
 * without it, and the start says so).
 */
export interface Wall {
  up: boolean;
}
