// The setup checklist (GET /v1/onboarding): each step is done as soon as the thing it asks for
// exists, read live (one statement), so it never drifts from the data. Steps above the caller's
// role are not listed. Dismissing hides the checklist for that person only.
//
// Steps whose thing another module owns (the chat widget, the knowledge base, triage, the
// assistant) are answered by that module's check in deps.onboardingChecks (runtime.ts); without
// one, the built-in answer here (docs/decisions.md "Onboarding").
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { type RequestContext, type Role, roleAtLeast } from '../../platform/http/context.js';
import { forbidden } from '../../platform/http/errors.js';
import type { PluggableStep } from './checks.js';
import type { Onboarding, OnboardingStep, StepId } from './schemas.js';

export type OnboardingView = Static<typeof Onboarding>;
type StepView = Static<typeof OnboardingStep>;

interface StepText {
  id: StepId;
  title: string;
  description: string;
  href: string;
  requires: 'admin' | 'agent';
}

const STEPS: StepText[] = [
  {
    id: 'connect_mailbox',
    title: 'Connect your support mailbox',
    description:
      'Forward your support address, or connect Gmail, Outlook or any IMAP mailbox, so email becomes tickets.',
    href: '/settings/mailboxes',
    requires: 'admin',
  },
  {
    id: 'invite_teammate',
    title: 'Invite a teammate',
    description: 'Bring in the people who answer customers with you.',
    href: '/settings/members',
    requires: 'admin',
  },
  {
    id: 'upload_photo',
    title: 'Add your photo',
    description: 'A face next to your replies helps customers and teammates recognise you.',
    href: '/settings/profile',
    requires: 'agent',
  },
  {
    id: 'install_widget',
    title: 'Install the chat widget',
    description: 'Add the widget to your website so customers can chat with you.',
    href: '/settings/widget',
    requires: 'admin',
  },
  {
    id: 'publish_article',
    title: 'Publish a help center article',
    description: 'Answer a common question once, for every customer who searches for it.',
    href: '/kb',
    requires: 'admin',
  },
  {
    id: 'setup_triage',
    title: 'Set up triage',
    description: 'Give new tickets a priority, a severity and labels automatically.',
    href: '/settings/triage',
    requires: 'admin',
  },
  {
    id: 'create_label',
    title: 'Create a label',
    description: 'Labels group tickets by topic, for filters, views and reports.',
    href: '/settings/labels',
    requires: 'agent',
  },
  {
    id: 'try_ollie',
    title: 'Ask the assistant',
    description: 'Ask the assistant to find tickets, summarise a conversation or draft a reply.',
    href: '/assistant',
    requires: 'agent',
  },
];

interface Facts {
  connect_mailbox: boolean;
  invite_teammate: boolean;
  upload_photo: boolean;
  install_widget: boolean;
  create_label: boolean;
  dismissed: boolean;
  label_creation: string | null;
}

/** Everything the built-in checks need, in one statement. */
async function facts(db: Kysely<DB>, workspaceId: string, userId: string): Promise<Facts> {
  const r = await sql<Facts>`
    SELECT
      EXISTS (SELECT 1 FROM mailboxes WHERE workspace_id = ${workspaceId}) AS connect_mailbox,
      (EXISTS (SELECT 1 FROM members WHERE workspace_id = ${workspaceId} AND user_id <> ${userId})
        OR EXISTS (SELECT 1 FROM invitations WHERE workspace_id = ${workspaceId}
                     AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now())) AS invite_teammate,
      EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND avatar_url IS NOT NULL) AS upload_photo,
      EXISTS (SELECT 1 FROM tickets WHERE workspace_id = ${workspaceId} AND channel = 'chat') AS install_widget,
      EXISTS (SELECT 1 FROM tags WHERE workspace_id = ${workspaceId}) AS create_label,
      EXISTS (SELECT 1 FROM onboarding_dismissals WHERE workspace_id = ${workspaceId} AND user_id = ${userId})
        AS dismissed,
      (SELECT settings ->> 'label_creation' FROM workspaces WHERE id = ${workspaceId}) AS label_creation`.execute(db);
  return r.rows[0]!;
}

function userOf(ctx: RequestContext): string {
  if (ctx.actor.kind !== 'member' || ctx.role === null)
    throw forbidden('This route is for signed-in people, not API keys.');
  return ctx.actor.userId;
}

export async function getOnboarding(deps: Deps, ctx: RequestContext): Promise<OnboardingView> {
  const userId = userOf(ctx);
  const role = ctx.role as Role;
  const db = deps.database.db;
  const f = await facts(db, ctx.workspaceId, userId);

  const done: Record<StepId, () => Promise<boolean> | boolean> = {
    connect_mailbox: () => f.connect_mailbox,
    invite_teammate: () => f.invite_teammate,
    upload_photo: () => f.upload_photo,
    // No widget yet: a chat ticket shows the widget is installed and used.
    install_widget: () => f.install_widget,
    // Replaced by the knowledge base's own check (runtime.ts); without it, nothing is published.
    publish_article: () => false,
    // Replaced by triage's own check (runtime.ts: auto_triage on, or settings changed from the defaults).
    setup_triage: () => false,
    create_label: () => f.create_label,
    // No assistant yet.
    try_ollie: () => false,
  };

  const steps: StepView[] = [];
  for (const s of STEPS) {
    // With label creation limited to admins, creating a label is an admin's step.
    const requires = s.id === 'create_label' && f.label_creation === 'admins' ? 'admin' : s.requires;
    if (!roleAtLeast(role, requires)) continue;
    const plugged = deps.onboardingChecks.get(s.id as PluggableStep);
    const isDone = plugged ? await plugged(db, ctx.workspaceId, userId) : await done[s.id]();
    steps.push({ id: s.id, title: s.title, description: s.description, done: isDone, href: s.href, requires });
  }
  return {
    steps,
    done_count: steps.filter((s) => s.done).length,
    total: steps.length,
    dismissed: f.dismissed,
  };
}

/** Hides the checklist for the caller (again: nothing changes). */
export async function dismissOnboarding(deps: Deps, ctx: RequestContext): Promise<void> {
  const userId = userOf(ctx);
  await deps.database.db
    .insertInto('onboarding_dismissals')
    .values({ workspace_id: ctx.workspaceId, user_id: userId })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
    .execute();
}
