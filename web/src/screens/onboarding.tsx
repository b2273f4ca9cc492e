// The onboarding checklist (GET /v1/onboarding: the steps the person's role can do, each done as
// soon as the thing exists), in the sidebar while it is neither dismissed nor complete: a button
// with the progress opens it (a popover: it never covers the inbox by itself); each step links to
// the screen that does it; "Hide this checklist" dismisses it for this person (POST
// /v1/onboarding/dismiss). Loaded lazily by onboarding-slot.tsx.
import * as Popover from '@radix-ui/react-popover';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type Onboarding, useDismissOnboarding, useRefreshOnboarding } from '../data/onboarding';
import { useWorkspace } from '../lib/context';
import { Icon } from '../ui/icons';
import { ErrorNote } from '../ui/page';
import { useAction } from '../ui/people';
import { sectionById } from './settings/sections';
import './onboarding.css';

/** The app's own address for a step's href, or null when the app has no screen for it yet. */
function appPath(href: string): string | null {
  if (href === '/kb' || href.startsWith('/kb/')) return href.replace(/^\/kb/, '/knowledge-base');
  const settings = /^\/settings\/([^/]+)/.exec(href);
  if (settings) return sectionById(settings[1]!) ? href : null;
  return ['/inbox', '/knowledge-base', '/chats', '/reports'].some((p) => href === p || href.startsWith(`${p}/`))
    ? href
    : null;
}

export default function Checklist({ data }: { data: Onboarding }) {
  const ws = useWorkspace();
  const refresh = useRefreshOnboarding(ws);
  const dismissal = useDismissOnboarding(ws);
  const [open, setOpen] = useState(false);
  const dismiss = useAction();
  return (
    <Popover.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        // What was done meanwhile shows as done.
        if (o) refresh();
      }}
    >
      <Popover.Trigger className="onboarding-trigger view-link">
        <span className="view-name">
          <Icon name="getStarted" />
          Get started
        </span>
        <span className="count">
          {data.done_count}/{data.total}
          <span className="visually-hidden"> steps done</span>
        </span>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          className="onboarding"
          side="right"
          align="end"
          sideOffset={8}
          collisionPadding={8}
          aria-labelledby="onboarding-title"
        >
          <h2 id="onboarding-title">Get started</h2>
          <p className="hint">
            {data.done_count} of {data.total} done.
          </p>
          <progress max={data.total} value={data.done_count} aria-labelledby="onboarding-title" />
          <ol className="onboarding-steps">
            {data.steps.map((s) => {
              const to = appPath(s.href);
              return (
                <li key={s.id} className={s.done ? 'done' : undefined}>
                  <span className="mark" aria-hidden="true">
                    {s.done ? '✓' : ''}
                  </span>
                  <div>
                    {to && !s.done ? (
                      <Link to={to as '/inbox'} search={{}} onClick={() => setOpen(false)}>
                        {s.title}
                      </Link>
                    ) : (
                      <span className="title">{s.title}</span>
                    )}
                    <span className="visually-hidden">{s.done ? ' (done)' : ' (not done yet)'}</span>
                    <p className="hint">
                      {s.description}
                      {!to && !s.done ? ' Not in the app yet.' : ''}
                    </p>
                  </div>
                </li>
              );
            })}
          </ol>
          <ErrorNote error={dismiss.error} what="Could not hide the checklist" />
          <div className="dialog-actions">
            <button
              type="button"
              disabled={dismiss.busy}
              onClick={() =>
                void dismiss.run(async () => {
                  await dismissal.mutateAsync();
                })
              }
            >
              Hide this checklist
            </button>
            <Popover.Close className="button">Close</Popover.Close>
          </div>
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
