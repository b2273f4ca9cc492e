// The settings sections: one file each under screens/settings/, loaded when first opened (the
// inbox's first load stays small). /settings/<id>/<rest> opens section <id> with the rest of the
// address as `path` (a webhook's delivery log at /settings/webhooks/<webhook id>, say).
// A later feature (pictures, AI, billing) adds its section here, in the group it belongs to; its
// file takes `SectionProps` from section.ts (never from here: that would make an import ring).
import type { ComponentType } from 'react';
import { useAiConfig } from '../../data/ai';
import { useWorkspace } from '../../lib/context';
import { lazyScreen } from '../../lib/lazy';
import { isAdmin, useRole } from '../../lib/role';
import type { SectionProps } from './section';

export type { SectionProps };

export type Group = 'Account' | 'Workspace' | 'Tickets' | 'Automation' | 'Channels' | 'Developers';
export const GROUPS: Group[] = ['Account', 'Workspace', 'Tickets', 'Automation', 'Channels', 'Developers'];

export interface Section {
  id: string;
  title: string;
  group: Group;
  /** What the section is for, on the settings overview. */
  about: string;
  /** Only owners and admins can change it (others see the section read-only or not at all). */
  admin?: boolean;
  component: ComponentType<SectionProps>;
  /** A hook saying whether the section is listed (default: always). */
  useShown?: () => boolean;
}

/** Settings → AI: listed for admins (an own provider key turns AI on), for others while AI is on. */
function useAiShown(): boolean {
  const ws = useWorkspace();
  const admin = isAdmin(useRole());
  return useAiConfig(ws, !admin).data?.enabled === true || admin;
}

const section = (
  id: string,
  title: string,
  group: Group,
  about: string,
  load: () => Promise<{ default: ComponentType<SectionProps> }>,
  admin = true,
  // lazyScreen, not React.lazy: a section whose file could not be fetched (the server away) is
  // fetched again on Retry, where React.lazy would keep the failure until a reload.
): Section => ({ id, title, group, about, admin, component: lazyScreen(load, 'default') });

export const SECTIONS: Section[] = [
  section(
    'profile',
    'Profile',
    'Account',
    'Your name, picture, password and two-factor sign-in',
    () => import('./profile'),
    false,
  ),
  section(
    'notifications',
    'Notifications',
    'Account',
    'What you are told about, and how',
    () => import('./notifications'),
    false,
  ),
  section('general', 'Workspace', 'Workspace', 'Name, time zone, language and pictures', () => import('./general')),
  section('members', 'Members', 'Workspace', 'Who works here, their roles, and invitations', () => import('./members')),
  section('teams', 'Teams', 'Workspace', 'Groups of agents, public or private', () => import('./teams')),
  section(
    'assignment',
    'Assignment',
    'Workspace',
    'Who gets new tickets, and who is available',
    () => import('./assignment'),
  ),
  section(
    'billing',
    'Billing',
    'Workspace',
    'The plan, seats, AI balance and AI usage',
    () => import('./billing'),
    false,
  ),
  section('labels', 'Labels', 'Tickets', 'Labels and exclusive label groups', () => import('./labels')),
  section(
    'fields',
    'Custom fields',
    'Tickets',
    'Extra fields on tickets, contacts and companies',
    () => import('./fields'),
  ),
  section('views', 'Views', 'Tickets', 'Saved ticket lists in the sidebar', () => import('./views')),
  section(
    'saved-replies',
    'Saved replies',
    'Tickets',
    'Answers to reuse, with placeholders',
    () => import('./saved-replies'),
    false,
  ),
  section(
    'automations',
    'Automations',
    'Automation',
    'When something happens, do something',
    () => import('./automations'),
  ),
  {
    ...section(
      'ai',
      'AI',
      'Automation',
      'Drafts, summaries and translations: models, tone, your own key',
      () => import('./ai'),
    ),
    useShown: useAiShown,
  },
  section(
    'triage',
    'Triage',
    'Automation',
    'What AI triage sets on its own, and the engine that decides',
    () => import('./triage'),
    false,
  ),
  section('sla', 'SLA policies', 'Automation', 'Response and resolution targets', () => import('./sla')),
  section(
    'business-hours',
    'Business hours',
    'Automation',
    'When the team works, and holidays',
    () => import('./business-hours'),
  ),
  section('mailboxes', 'Mailboxes', 'Channels', 'Email addresses customers write to', () => import('./mailboxes')),
  section(
    'outgoing-mail',
    'Outgoing mail',
    'Channels',
    'Whether mail is sent, and the mail kept while it is not',
    () => import('./outgoing-mail'),
  ),
  section(
    'help-center',
    'Help center',
    'Channels',
    'The public help center: title, colours, logo',
    () => import('./help-center'),
  ),
  section(
    'widget',
    'Chat widget',
    'Channels',
    'The chat on your website, and how to install it',
    () => import('./widget'),
  ),
  section('api-keys', 'API keys', 'Developers', 'Keys for scripts and integrations', () => import('./api-keys')),
  section(
    'webhooks',
    'Webhooks',
    'Developers',
    'Events sent to your URLs, and their deliveries',
    () => import('./webhooks'),
  ),
  section('audit-log', 'Audit log', 'Developers', 'Who changed what, and when', () => import('./audit-log')),
];

export const sectionById = (id: string): Section | undefined => SECTIONS.find((s) => s.id === id);
