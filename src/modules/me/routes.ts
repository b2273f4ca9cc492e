// GET /v1/me: who is calling, and the workspaces they can use; PATCH /v1/me: the signed-in
// person's own profile. Two-factor and password: security.ts; their sessions: sessions.ts.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { Nullable, Role } from '../../platform/http/schemas.js';
import { ScopeSchema } from '../api-keys/schemas.js';
import { getUser } from '../auth/service.js';
import { PICTURE_RULES, pictureBody, withMultipart } from '../images/http.js';
import { pictureFromUpload, pictureFromUrl } from '../images/service.js';
import { workspacesOfUser } from '../workspace/service.js';
import { PatchMeBody } from './schemas.js';
import meSecurityRoutes from './security.js';
import { setUserPicture, updateMe } from './service.js';
import meSessionRoutes from './sessions.js';

const Me = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  avatar_source: Nullable(Type.String()),
  mfa_enabled: Type.Boolean(),
  /** user: a signed-in person; api_key: the key itself (its id and name; no email). */
  kind: Type.Union([Type.Literal('user'), Type.Literal('api_key')]),
  scopes: Nullable(Type.Array(ScopeSchema)),
  workspaces: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String(), role: Nullable(Role) }),
  ),
});

export default async function meRoutes(app: App, deps: Deps) {
  await meSecurityRoutes(app, deps);
  await meSessionRoutes(app, deps);
  app.get(
    '/v1/me',
    {
      config: { access: access.identity() },
      schema: { tags: ['me'], summary: 'The signed-in user (or API key) and its workspaces', response: { 200: Me } },
    },
    async (req) => {
      const actor = req.ctx?.actor;
      if (actor?.kind === 'api_key') {
        const { ctx } = req;
        const row = await deps.database.db
          .selectFrom('api_keys as k')
          .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
          .select(['k.id', 'k.name', 'w.id as w_id', 'w.name as w_name', 'w.slug as w_slug'])
          .where('k.workspace_id', '=', ctx.workspaceId)
          .where('k.id', '=', actor.apiKeyId)
          .executeTakeFirst();
        if (!row) throw notFound();
        return {
          id: row.id,
          name: row.name,
          email: null,
          avatar_url: null,
          avatar_source: null,
          mfa_enabled: false,
          kind: 'api_key' as const,
          scopes: ctx.scopes,
          workspaces: [{ id: row.w_id, name: row.w_name, slug: row.w_slug, role: null }],
        };
      }
      return meOf(deps, req.user.userId);
    },
  );

  app.patch(
    '/v1/me',
    {
      config: { access: access.user() },
      schema: {
        tags: ['me'],
        summary: 'Change your own profile (name, picture)',
        description:
          'For signed-in people (API keys get 403). A change is a member.updated event and an audit entry ' +
          '(user.updated; user.avatar_updated or user.avatar_removed for the picture) in every workspace you ' +
          'belong to; the same values change nothing. avatar_url: a picture at an HTTPS URL is fetched by the ' +
          'server and processed as an upload (422 at body.avatar_url when it cannot be fetched: not https, a ' +
          'private or local address, a redirect to one, over 5 MB or 10 s; 422 unsupported_image or ' +
          'image_too_large for what it holds).',
        body: PatchMeBody,
        response: { 200: Me },
      },
    },
    async (req) => {
      const { avatar_url: avatarUrl, ...profile } = req.body;
      // The picture is fetched and processed first: a URL that fails changes nothing.
      const picture =
        typeof avatarUrl === 'string'
          ? await pictureFromUrl(
              deps,
              avatarUrl,
              { kind: 'user', id: req.user.userId, workspaceId: null },
              'upload',
              'body.avatar_url',
            )
          : null;
      await updateMe(deps, req.user, profile);
      if (avatarUrl !== undefined) await setUserPicture(deps, req.user, { picture });
      return meOf(deps, req.user.userId);
    },
  );

  // Pictures (src/modules/images): PUT and DELETE /v1/me/avatar.
  await withMultipart(app, (scope) => {
    scope.put(
      '/v1/me/avatar',
      {
        config: { access: access.user(), idempotent: false, swaggerTransform: pictureBody },
        schema: {
          tags: ['me'],
          summary: 'Upload your picture (multipart/form-data, one field named file)',
          description: `${PICTURE_RULES} member.updated follows in every workspace you belong to.`,
          consumes: ['multipart/form-data'],
          response: { 200: Me },
        },
      },
      async (req) => {
        const owner = { kind: 'user' as const, id: req.user.userId, workspaceId: null };
        const picture = await pictureFromUpload(deps, req, owner, 'crop');
        await setUserPicture(deps, req.user, { picture });
        return meOf(deps, req.user.userId);
      },
    );
  });

  app.delete(
    '/v1/me/avatar',
    {
      config: { access: access.user() },
      schema: { tags: ['me'], summary: 'Remove your picture (avatar_url becomes null)', response: { 200: Me } },
    },
    async (req) => {
      await setUserPicture(deps, req.user, { picture: null });
      return meOf(deps, req.user.userId);
    },
  );
}

/** A signed-in person as GET /v1/me shows them. */
async function meOf(deps: Deps, userId: string) {
  const [user, workspaces] = await Promise.all([getUser(deps, userId), workspacesOfUser(deps, userId)]);
  if (!user) throw notFound();
  return {
    ...user,
    kind: 'user' as const,
    scopes: null,
    workspaces: workspaces.map((w) => ({ id: w.id, name: w.name, slug: w.slug, role: w.role as 'owner' })),
  };
}
