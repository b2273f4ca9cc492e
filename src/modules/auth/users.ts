// The user as the API shows it (never the password hash or two-factor secrets).
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { User } from './schemas.js';

export type UserView = Static<typeof User>;

export interface UserRow {
  id: string;
  name: string;
  email: string;
  avatar_url: string | null;
  avatar_source: string | null;
  mfa_enabled: boolean;
}

export const presentUser = (u: UserRow): UserView => ({
  id: u.id,
  name: u.name,
  email: u.email,
  avatar_url: u.avatar_url,
  avatar_source: u.avatar_source,
  mfa_enabled: u.mfa_enabled,
});

export async function getUser(deps: Deps, userId: string): Promise<UserView | null> {
  const u = await deps.database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  return u ? presentUser(u) : null;
}
