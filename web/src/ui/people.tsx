// Small pieces the account and people screens share (profile, workspace, members, teams,
// assignment, invitation, onboarding), generic enough for other screens: the signed-in person's
// role in the selected workspace, a picture with a text fallback, a picture upload's failure in
// words, an action's busy/failed/done state, and the workspace's members.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useCallback, useState } from 'react';
import { api, ok, type Schemas } from '../lib/api';
import { useWorkspace } from '../lib/context';
import { ApiError, errorText } from '../lib/errors';
import { useLiveEvents } from '../lib/events';
import { useSession } from '../lib/session';
import './people.css';

export type Role = 'owner' | 'admin' | 'agent' | 'viewer';

/** The signed-in person's role in the selected workspace (null while unknown). */
export function useMyRole(): Role | null {
  const s = useSession();
  const ws = useWorkspace();
  if (s.status !== 'signed_in') return null;
  return (s.me?.workspaces.find((w) => w.id === ws)?.role as Role | null | undefined) ?? null;
}

export const isAdminRole = (r: Role | null): boolean => r === 'owner' || r === 'admin';

export const ROLE_LABEL: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  agent: 'Agent',
  viewer: 'Viewer',
};

/** Said before a read-only screen, so that the API's 403 is never the first a person learns of it. */
export function AdminOnly({ what = 'this' }: { what?: string }) {
  return <p className="hint admin-only">Only owners and admins can change {what}. You can see it.</p>;
}

/** A person's (or workspace's) picture, or their initials when they have none. */
export function Avatar({ url, name, size = 32 }: { url: string | null | undefined; name: string; size?: number }) {
  const initials =
    name
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((w) => w[0]?.toUpperCase())
      .join('') || '?';
  const style = { width: size, height: size, fontSize: size * 0.4 };
  if (url) {
    const small = size <= 64 ? `${url}${url.includes('?') ? '&' : '?'}s=64` : url;
    return <img className="avatar" src={small} alt="" width={size} height={size} style={style} />;
  }
  return (
    <span className="avatar avatar-initials" aria-hidden="true" style={style}>
      {initials}
    </span>
  );
}

/** A failed picture upload in words: what was wrong with the file, and what to do. */
export function pictureErrorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'too_large' || err.status === 413)
      return 'The picture is larger than 5 MB. Choose a smaller file.';
    if (err.code === 'unsupported_image')
      return 'This file is not a picture the help desk can use (or it is damaged). Choose a PNG, JPEG, GIF or WebP file.';
    if (err.code === 'image_too_large')
      return 'The picture is too big or too small: it must be 16 to 4,096 pixels a side and at most 16 megapixels.';
  }
  return errorText(err);
}

/** A multipart body with one part named `file` (the typed client sends FormData as it is). */
export function fileBody(file: File): { file: string } {
  const form = new FormData();
  form.append('file', file);
  return form as unknown as { file: string };
}

/** An action's state: busy while it runs, its failure, and a short "done" message after it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>, e?: FormEvent) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const said = await fn();
      if (typeof said === 'string') setDone(said);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, done, run, setError };
}

/** A short confirmation that something was saved (read out politely). */
export function Done({ text }: { text: string | null }) {
  return (
    <p className="done" role="status">
      {text ?? ''}
    </p>
  );
}

export type MemberRow = Schemas['Member'];
export const membersKey = (ws: string) => ['members', ws] as const;

/** Every member of the selected workspace (all pages), kept current by member.* events. */
export function useMembers() {
  const ws = useWorkspace();
  const qc = useQueryClient();
  useLiveEvents(['member.'], () => void qc.invalidateQueries({ queryKey: membersKey(ws) }));
  return useQuery({
    queryKey: membersKey(ws),
    queryFn: async () => {
      const all: MemberRow[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 50; i++) {
        const page = await ok(
          api.GET('/v1/members', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }),
        );
        all.push(...page.data);
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      return all;
    },
  });
}
