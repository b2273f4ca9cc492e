// The signed-in frame: the sidebar (workspace switcher, the built-in views and saved views with
// their counts, settings, the account menu), the live connection and its state, the notice to
// admins while outgoing mail is not set up (mail-notice.tsx), and the list of keyboard shortcuts
// (?). Below 720 px the sidebar is a drawer (a Radix dialog) opened by the top bar's Menu button,
// so every entry stays reachable on a phone; the top bar keeps the live state.
import * as Dialog from '@radix-ui/react-dialog';
import * as Menu from '@radix-ui/react-dropdown-menu';
import { Link, Outlet, useLocation, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { useAiOn } from '../data/ai';
import { useAccounts } from '../data/auth';
import { useTicketCounts } from '../data/tickets';
import { useViews } from '../data/views';
import type { TicketCounts } from '../lib/api';
import { LiveContext, ShortcutsContext, WorkspaceContext } from '../lib/context';
import { useShortcuts } from '../lib/keys';
import type { LiveStatus } from '../lib/live';
import { Redirect } from '../lib/redirect';
import { getSession, logout, type Session, selectWorkspace, switchAccount, useSession } from '../lib/session';
import { useLive } from '../lib/use-live';
import { DEFAULT_VIEW, VIEWS } from '../lib/views';
import { TicketCount } from '../ui/count';
import { Icon, type IconName } from '../ui/icons';
import { LiveState } from '../ui/live-state';
import { AssistantButton, AssistantSlot } from './assistant/launcher';
import { assistantOpen, focusAssistant, useAssistantState } from './assistant/store';
import { MailNotice } from './mail-notice';
import { NotificationsBell } from './notifications-bell';
import { OnboardingSlot } from './onboarding-slot';
import './shell.css';

type SignedIn = Extract<Session, { status: 'signed_in' }>;

export function Shell() {
  const s = useSession();
  // Where to come back after signing in: the address this frame was opened at. Read once: while
  // the redirect runs this frame still renders, at the sign-in page's address.
  const location = useLocation();
  const opened = useRef(location.href).current;
  if (s.status === 'loading') return <p className="loading">Loading…</p>;
  if (s.status === 'signed_out') return <Redirect to="/login" search={{ next: opened }} />;
  if (!s.workspaceId) return <Redirect to="/workspaces/new" />;
  // Another account or workspace: a new frame (its own socket; nothing cached of the other).
  return <WorkspaceShell key={`${s.user.id}:${s.workspaceId}`} session={s} ws={s.workspaceId} />;
}

function WorkspaceShell({ session, ws }: { session: SignedIn; ws: string }) {
  const { status: live, live: connection } = useLive(ws);
  const [shortcuts, setShortcuts] = useState(false);
  useShortcuts({ '?': () => setShortcuts((o) => !o) });
  return (
    <WorkspaceContext.Provider value={ws}>
      <LiveContext.Provider value={connection}>
        <ShortcutsContext.Provider value={() => setShortcuts(true)}>
          <div className="app">
            <a className="skip" href="#main">
              Skip to content
            </a>
            <Navigation session={session} ws={ws} live={live} />
            <main id="main" tabIndex={-1}>
              <MailNotice />
              <Outlet />
            </main>
            <AssistantSlot />
            <ShortcutsDialog ws={ws} open={shortcuts} onOpenChange={setShortcuts} />
          </div>
        </ShortcutsContext.Provider>
      </LiveContext.Provider>
    </WorkspaceContext.Provider>
  );
}

const TOOLS = [
  ['/chats', 'Chats', 'chats'],
  ['/knowledge-base', 'Knowledge base', 'kb'],
  ['/reports', 'Reports', 'reports'],
  ['/settings', 'Settings', 'settings'],
] as const satisfies ReadonlyArray<readonly [string, string, IconName]>;

/** The narrow layout's breakpoint (styles/tickets.css and shell.css have the same width). */
const NARROW = '(max-width: 720px)';

function useNarrow(): boolean {
  return useSyncExternalStore(
    (on) => {
      const mq = matchMedia(NARROW);
      mq.addEventListener('change', on);
      return () => mq.removeEventListener('change', on);
    },
    () => matchMedia(NARROW).matches,
  );
}

/**
 * The sidebar, or on a narrow screen a top bar (Menu, the workspace, the live state) whose Menu
 * opens the same sidebar as a drawer; following a link in it closes it.
 */
function Navigation({ session, ws, live }: { session: SignedIn; ws: string; live: LiveStatus }) {
  const narrow = useNarrow();
  const [open, setOpen] = useState(false);
  const href = useLocation({ select: (l) => l.href });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new address (a link followed) is the trigger
  useEffect(() => setOpen(false), [href]);
  // The assistant opened from the drawer: the drawer closes, the panel keeps the focus.
  const assistant = useAssistantState().open;
  useEffect(() => {
    if (assistant) setOpen(false);
  }, [assistant]);
  if (!narrow) return <Sidebar session={session} ws={ws} live={live} />;
  const name = session.me?.workspaces.find((w) => w.id === ws)?.name ?? 'Workspace';
  return (
    <header className="topbar">
      <Dialog.Root open={open} onOpenChange={setOpen}>
        <Dialog.Trigger className="icon-button menu-button" aria-label="Menu">
          <Icon name="menu" />
        </Dialog.Trigger>
        <Dialog.Portal>
          <Dialog.Overlay className="overlay drawer-overlay" />
          <Dialog.Content
            className="drawer"
            aria-describedby={undefined}
            onCloseAutoFocus={(e) => {
              if (!assistantOpen()) return;
              e.preventDefault();
              focusAssistant();
            }}
          >
            <Dialog.Title className="visually-hidden">Menu</Dialog.Title>
            <Dialog.Close className="icon-button drawer-close" aria-label="Close the menu">
              <Icon name="close" />
            </Dialog.Close>
            <Sidebar session={session} ws={ws} live={live} inDrawer />
          </Dialog.Content>
        </Dialog.Portal>
      </Dialog.Root>
      <span className="topbar-name">{name}</span>
      <LiveState status={live} />
    </header>
  );
}

function Sidebar({
  session,
  ws,
  live,
  inDrawer = false,
}: {
  session: SignedIn;
  ws: string;
  live: LiveStatus;
  /** In the narrow layout's drawer: the top bar shows the live state. */
  inDrawer?: boolean;
}) {
  const counts = useTicketCounts(ws);
  const views = useViews(ws);
  const count = (k: keyof Omit<TicketCounts, 'views'>) => counts.data?.[k];
  // The view on screen: the inbox without one is the default view's.
  const location = useLocation();
  const shown = location.pathname === '/inbox' ? ((location.search as { view?: string }).view ?? DEFAULT_VIEW) : null;
  return (
    <aside className="sidebar" aria-label="Workspace">
      <WorkspaceMenu session={session} ws={ws} />
      <nav aria-label="Views">
        <ul className="views">
          {Object.entries(VIEWS).map(([id, v]) => (
            <li key={id}>
              <Link
                to="/inbox"
                search={{ view: id }}
                className="view-link"
                aria-current={shown === id ? 'page' : undefined}
              >
                <span className="view-name">
                  <Icon name={id as IconName} />
                  {v.label}
                </span>
                <TicketCount n={count(v.count)} />
              </Link>
            </li>
          ))}
        </ul>
        {views.data && views.data.data.length > 0 && (
          <>
            <h2 className="nav-heading">Saved views</h2>
            <ul className="views">
              {views.data.data.map((v) => (
                <li key={v.id}>
                  <Link
                    to="/inbox"
                    search={{ view: `view:${v.id}` }}
                    className="view-link"
                    aria-current={shown === `view:${v.id}` ? 'page' : undefined}
                  >
                    <span className="view-name">
                      <Icon name="savedView" />
                      {v.name}
                    </span>
                    <TicketCount n={counts.data?.views[v.id]} />
                  </Link>
                </li>
              ))}
            </ul>
          </>
        )}
      </nav>
      {counts.error && (
        <p className="error" role="alert">
          Counts: {counts.error.message}
        </p>
      )}
      <nav aria-label="Workspace tools" className="sidebar-foot">
        <ul className="views">
          {TOOLS.map(([to, label, icon]) => (
            <li key={to}>
              <Link to={to} className="view-link" activeProps={{ 'aria-current': 'page' }}>
                <span className="view-name">
                  <Icon name={icon} />
                  {label}
                </span>
              </Link>
            </li>
          ))}
        </ul>
        <AssistantButton />
        <NotificationsBell />
        <OnboardingSlot />
        {!inDrawer && <LiveState status={live} />}
      </nav>
    </aside>
  );
}

function WorkspaceMenu({ session, ws }: { session: SignedIn; ws: string }) {
  const navigate = useNavigate();
  const workspaces = session.me?.workspaces ?? [];
  const current = workspaces.find((w) => w.id === ws);
  const accounts = useAccounts(session.user.id);
  const others = (accounts.data ?? []).filter((a) => a.user.id !== session.user.id);
  const signOut = async (all: boolean) => {
    await logout(all).catch(() => {});
    await navigate({ to: getSession().status === 'signed_in' ? '/inbox' : '/login', search: {} });
  };
  const switchTo = async (userId: string) => {
    await switchAccount(userId).catch(() => {});
    await navigate({ to: '/inbox', search: {} });
  };
  return (
    <Menu.Root>
      <Menu.Trigger className="workspace-trigger">
        <span className="workspace-name">
          <span className="visually-hidden">Workspace: </span>
          {current?.name ?? 'Workspace'}
        </span>
        <span className="who">{session.user.name}</span>
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Content className="menu" align="start" sideOffset={4}>
          <Menu.Label className="menu-label">Workspaces</Menu.Label>
          <Menu.RadioGroup
            value={ws}
            onValueChange={(id) => {
              selectWorkspace(id);
              void navigate({ to: '/inbox', search: {} });
            }}
          >
            {workspaces.map((w) => (
              <Menu.RadioItem key={w.id} value={w.id} className="menu-item">
                <Menu.ItemIndicator className="menu-check">✓</Menu.ItemIndicator>
                {w.name}
              </Menu.RadioItem>
            ))}
          </Menu.RadioGroup>
          <Menu.Item className="menu-item" onSelect={() => void navigate({ to: '/workspaces/new' })}>
            New workspace…
          </Menu.Item>
          <Menu.Separator className="menu-sep" />
          <Menu.Label className="menu-label">Signed in as {session.user.email}</Menu.Label>
          {others.map((a) => (
            <Menu.Item key={a.user.id} className="menu-item" onSelect={() => void switchTo(a.user.id)}>
              Switch to {a.user.name} ({a.user.email})
            </Menu.Item>
          ))}
          <Menu.Item className="menu-item" onSelect={() => void navigate({ to: '/login', search: { add: true } })}>
            Add another account…
          </Menu.Item>
          <Menu.Item className="menu-item" onSelect={() => void signOut(false)}>
            Sign out
          </Menu.Item>
          <Menu.Item className="menu-item" onSelect={() => void signOut(true)}>
            Sign out of every account on this browser
          </Menu.Item>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}

const SHORTCUTS: Array<[string, string]> = [
  ['j / k', 'Next / previous ticket in the list'],
  ['Enter', 'Open the ticket'],
  ['/', 'Search tickets'],
  ['r', 'Reply (on a ticket)'],
  ['n', 'Internal note (on a ticket)'],
  ['Ctrl+Enter', 'Send what you wrote'],
  ['e', 'Solve the ticket'],
  ['Escape', 'Leave the text box; on a ticket, back to the inbox'],
  ['?', 'This list'],
];

/** Listed while AI is on in the workspace (screens/ticket/ai-*.tsx). */
const AI_SHORTCUTS: Array<[string, string]> = [
  ['d', 'Draft a reply with AI (on a ticket)'],
  ['w', 'Rewrite the reply or the selection'],
  ['t', "Translate the reply into the customer's language"],
  ['s', 'Summarize the ticket'],
  ['a', 'Ask about the ticket'],
  ['Shift+K', 'Draft an article from a solved ticket'],
  ['Shift+T', 'Triage the ticket; then y accepts, x dismisses a suggestion'],
  ['Escape', 'Stop what AI is writing'],
  ['Shift+A', 'Open or close the assistant (Escape closes it too)'],
];

function ShortcutsDialog({ ws, open, onOpenChange }: { ws: string; open: boolean; onOpenChange(o: boolean): void }) {
  const ai = useAiOn(ws, open);
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>Keyboard shortcuts</Dialog.Title>
          <Dialog.Description className="hint">They work when no text box has the focus.</Dialog.Description>
          <dl className="shortcuts">
            {[...SHORTCUTS, ...(ai ? AI_SHORTCUTS : [])].map(([k, what]) => (
              <div key={`${k} ${what}`}>
                <dt>
                  <kbd>{k}</kbd>
                </dt>
                <dd>{what}</dd>
              </div>
            ))}
          </dl>
          <Dialog.Close className="button">Close</Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
