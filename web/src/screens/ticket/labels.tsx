// A ticket's labels (the API's tags): each removable, and added from a searchable list grouped
// as in settings (in an exclusive group the API keeps one, so picking another replaces it), or
// created by typing a new name.
import * as Popover from '@radix-ui/react-popover';
import { useId, useState } from 'react';
import { useTagGroups, useTags } from '../../data/tags';
import type { TicketPatch } from '../../data/tickets';
import { errorText, type Ticket } from '../../lib/api';

export function Labels({
  ws,
  ticket: t,
  readOnly,
  patch,
  error,
}: {
  ws: string;
  ticket: Ticket;
  readOnly: boolean;
  patch(what: string, body: TicketPatch): Promise<boolean>;
  error: unknown;
}) {
  const tags = (useTags(ws).data ?? []).filter((x) => x.applies_to.includes('tickets') && !x.archived);
  const groups = useTagGroups(ws).data ?? [];
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const searchId = useId();
  const has = new Set(t.tags.map((x) => x.id));
  const matching = tags.filter((x) => !has.has(x.id) && x.name.toLowerCase().includes(q.trim().toLowerCase()));
  const grouped: { key: string; name: string; exclusive: boolean; tags: typeof tags }[] = [
    ...groups.map((g) => ({
      key: g.id,
      name: g.name,
      exclusive: g.exclusive,
      tags: matching.filter((x) => x.group_id === g.id),
    })),
    { key: 'none', name: 'Other labels', exclusive: false, tags: matching.filter((x) => !x.group_id) },
  ].filter((g) => g.tags.length > 0);
  const exact = tags.some((x) => x.name.toLowerCase() === q.trim().toLowerCase());
  const add = async (name: string) => {
    setOpen(false);
    setQ('');
    await patch('labels', { add_tags: [name] });
  };
  return (
    <div className="prop prop-labels">
      <span className="prop-label" id={`${searchId}-l`}>
        Labels
      </span>
      <div className="prop-value">
        <div className="labels editable-labels">
          {t.tags.map((tag) => (
            <span key={tag.id} className={`label label-${tag.color}`}>
              {tag.name}
              {!readOnly && (
                <button
                  type="button"
                  className="label-remove"
                  aria-label={`Remove label ${tag.name}`}
                  onClick={() => void patch('labels', { remove_tags: [tag.name] })}
                >
                  ×
                </button>
              )}
            </span>
          ))}
          {t.tags.length === 0 && <span className="hint">None</span>}
        </div>
        {!readOnly && (
          <Popover.Root open={open} onOpenChange={setOpen}>
            <Popover.Trigger className="button add-label">Add label</Popover.Trigger>
            <Popover.Portal>
              <Popover.Content className="menu label-picker" align="start" sideOffset={4}>
                <label htmlFor={searchId} className="menu-label">
                  Find a label
                </label>
                <input
                  id={searchId}
                  type="search"
                  value={q}
                  maxLength={50}
                  onChange={(e) => setQ(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' && q.trim()) {
                      e.preventDefault();
                      const first = matching[0];
                      void add(exact || !first ? q.trim() : first.name);
                    }
                  }}
                />
                {grouped.map((g) => (
                  <fieldset key={g.key} className="label-group">
                    <legend className="menu-label">
                      {g.name}
                      {g.exclusive ? ' (one of)' : ''}
                    </legend>
                    {g.tags.map((x) => (
                      <button key={x.id} type="button" className="menu-item" onClick={() => void add(x.name)}>
                        <span className={`label label-${x.color}`}>{x.name}</span>
                        {g.exclusive && t.tags.some((o) => o.group_id === g.key) ? (
                          <span className="hint"> replaces {t.tags.find((o) => o.group_id === g.key)?.name}</span>
                        ) : null}
                      </button>
                    ))}
                  </fieldset>
                ))}
                {q.trim() && !exact && (
                  <button type="button" className="menu-item" onClick={() => void add(q.trim())}>
                    Create “{q.trim()}”
                  </button>
                )}
              </Popover.Content>
            </Popover.Portal>
          </Popover.Root>
        )}
        {error ? (
          <p className="error" role="alert">
            Could not change the labels: {errorText(error)}
          </p>
        ) : null}
      </div>
    </div>
  );
}
