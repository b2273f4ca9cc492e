// The app's routes. The inbox is in the first load; the ticket page and settings are chunks of
// their own, loaded when first opened (the inbox's first load stays small: test/web/build.browser.test.ts).
// No screen takes the app down: a route that fails (its chunk could not be fetched, or it threw)
// shows its own error with Retry inside the shell (ui/route-error.tsx), and the rate limit's
// notice is above every screen.
import { createRootRoute, createRoute, createRouter, Outlet } from '@tanstack/react-router';
import { lazyScreen } from './lib/lazy';
import { Redirect } from './lib/redirect';
import { useSession } from './lib/session';
import { type InboxSearch, parseInboxSearch } from './lib/views';
import { AssistantRoute } from './screens/assistant/launcher';
import { Login, NewWorkspace, ProfileReturn, SignInReturn, Signup } from './screens/auth';
import { Inbox } from './screens/inbox/index';
import { Shell } from './screens/shell';
import { RateLimitNotice } from './ui/rate-limit-notice';
import { RouteError } from './ui/route-error';

function Root() {
  return (
    <>
      <RateLimitNotice />
      <Outlet />
    </>
  );
}

function Home() {
  const s = useSession();
  if (s.status === 'loading') return <p className="loading">Loading…</p>;
  return <Redirect to={s.status === 'signed_in' ? '/inbox' : '/login'} />;
}

function NotFound() {
  return (
    <main className="auth">
      <h1>Page not found</h1>
      <p>
        <a href="/inbox">Go to the inbox</a>
      </p>
    </main>
  );
}

const rootRoute = createRootRoute({ component: Root, notFoundComponent: NotFound });
const indexRoute = createRoute({ getParentRoute: () => rootRoute, path: '/', component: Home });
const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/login',
  component: Login,
  validateSearch: (s: Record<string, unknown>): { next?: string; add?: true } => ({
    ...(typeof s.next === 'string' && s.next.startsWith('/') && !s.next.startsWith('//') ? { next: s.next } : {}),
    ...(s.add === true || s.add === '1' || s.add === 1 ? { add: true as const } : {}),
  }),
});
// Where the service sends the browser back from Google/Microsoft when it is not signed in at once
// (#oauth_error=, #mfa_token=) and after linking an account (?linked=1): screens/auth.tsx.
const signInReturnRoute = createRoute({ getParentRoute: () => rootRoute, path: '/sign-in', component: SignInReturn });
const profileReturnRoute = createRoute({ getParentRoute: () => rootRoute, path: '/profile', component: ProfileReturn });
const signupRoute = createRoute({ getParentRoute: () => rootRoute, path: '/signup', component: Signup });
const newWorkspaceRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workspaces/new',
  component: NewWorkspace,
});
const shellRoute = createRoute({ getParentRoute: () => rootRoute, id: 'app', component: Shell });
export const inboxRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/inbox',
  component: Inbox,
  validateSearch: (s: Record<string, unknown>): InboxSearch => parseInboxSearch(s),
});
export const ticketRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/tickets/$number',
  component: lazyScreen(() => import('./screens/ticket/index'), 'TicketPage'),
});
const settingsRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/settings/$',
  component: lazyScreen(() => import('./screens/settings/index'), 'Settings'),
});
const settingsIndexRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/settings',
  component: lazyScreen(() => import('./screens/settings/index'), 'Settings'),
});
// The knowledge base's editor: /knowledge-base, /knowledge-base/<rest> (collections, articles).
const kbRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/knowledge-base/$',
  component: lazyScreen(() => import('./screens/kb/index'), 'KnowledgeBase'),
});
const kbIndexRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/knowledge-base',
  component: lazyScreen(() => import('./screens/kb/index'), 'KnowledgeBase'),
});
// Chat conversations from the widget: /chats, /chats/<conversation id>.
const chatsRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/chats/$',
  component: lazyScreen(() => import('./screens/chats/index'), 'Chats'),
});
const chatsIndexRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/chats',
  component: lazyScreen(() => import('./screens/chats/index'), 'Chats'),
});
const reportsRoute = createRoute({
  getParentRoute: () => shellRoute,
  path: '/reports',
  component: lazyScreen(() => import('./screens/reports/index'), 'Reports'),
});
// The assistant's address (onboarding's "Ask the assistant"): the inbox with the panel open.
const assistantRoute = createRoute({ getParentRoute: () => shellRoute, path: '/assistant', component: AssistantRoute });
// An invitation's link (the invitation mail's, and the one an admin copies): signed in or not.
const inviteRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/invite/$token',
  component: lazyScreen(() => import('./screens/invite'), 'AcceptInvitation'),
});

const routeTree = rootRoute.addChildren([
  indexRoute,
  loginRoute,
  signInReturnRoute,
  profileReturnRoute,
  signupRoute,
  newWorkspaceRoute,
  inviteRoute,
  shellRoute.addChildren([
    inboxRoute,
    ticketRoute,
    settingsRoute,
    settingsIndexRoute,
    kbRoute,
    kbIndexRoute,
    chatsRoute,
    chatsIndexRoute,
    reportsRoute,
    assistantRoute,
  ]),
]);

export const router = createRouter({ routeTree, defaultPreload: 'intent', defaultErrorComponent: RouteError });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
