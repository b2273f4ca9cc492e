// Settings: the sections in groups on the left, the open one on the right. /settings lists them;
// /settings/<id>/... opens one (sections.ts; each is a chunk of its own). The addresses the service
// sends people to (/settings/mailboxes after a mailbox's OAuth connect, /settings/billing) land here.
import { Link, useParams } from '@tanstack/react-router';
import { type ReactNode, Suspense } from 'react';
import { Loading, NotYet, PageTitle } from '../../ui/page';
import { GROUPS, SECTIONS, type Section, sectionById } from './sections';
import './settings.css';

export function Settings() {
  const params = useParams({ strict: false }) as { _splat?: string };
  const [id = '', ...rest] = (params._splat ?? '').split('/').filter(Boolean);
  const open = id ? sectionById(id) : undefined;
  const Section = open?.component;
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        {GROUPS.map((g) => (
          <div key={g}>
            <h2 className="nav-heading">{g}</h2>
            <ul>
              {SECTIONS.filter((s) => s.group === g).map((s) => (
                <Listed key={s.id} section={s}>
                  <li>
                    <Link
                      to="/settings/$"
                      params={{ _splat: s.id }}
                      className="view-link"
                      aria-current={s.id === id ? 'page' : undefined}
                    >
                      {s.title}
                    </Link>
                  </li>
                </Listed>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <section className="settings-body" aria-label={open?.title ?? 'Settings'}>
        {!id ? (
          <Overview />
        ) : Section ? (
          <Suspense fallback={<Loading />}>
            <Section path={rest} />
          </Suspense>
        ) : (
          <>
            <PageTitle>{`Settings: ${id}`}</PageTitle>
            <NotYet />
          </>
        )}
      </section>
    </div>
  );
}

function Overview() {
  return (
    <>
      <PageTitle>Settings</PageTitle>
      {GROUPS.map((g) => (
        <section key={g} className="settings-group">
          <h2>{g}</h2>
          <dl>
            {SECTIONS.filter((s) => s.group === g).map((s) => (
              <Listed key={s.id} section={s}>
                <div>
                  <dt>
                    <Link to="/settings/$" params={{ _splat: s.id }}>
                      {s.title}
                    </Link>
                  </dt>
                  <dd className="hint">{s.about}</dd>
                </div>
              </Listed>
            ))}
          </dl>
        </section>
      ))}
    </>
  );
}

const always = () => true;

/** A section's entry, unless its `useShown` says it is not for this person now (AI: sections.ts). */
function Listed({ section, children }: { section: Section; children: ReactNode }) {
  const useShown = section.useShown ?? always;
  return useShown() ? children : null;
}
