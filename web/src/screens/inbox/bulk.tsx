// Bulk changes to the selected tickets: status, assignee, add or remove a label, through
// POST /v1/tickets/bulk (up to 100 a request; more are sent in turns with a progress note).
import * as Menu from '@radix-ui/react-dropdown-menu';
import { type ReactNode, useState } from 'react';
import { useMembers } from '../../data/members';
import { useTags } from '../../data/tags';
import { type BulkPatch, useBulkUpdate } from '../../data/tickets';
import { errorText, type Ticket } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import { count } from '../../ui/words';

type Patch = BulkPatch;

function BulkMenu({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Menu.Root>
      <Menu.Trigger className="button">{label} ▾</Menu.Trigger>
      <Menu.Portal>
        <Menu.Content className="menu bulk-menu" align="start" sideOffset={4}>
          {children}
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}

export function BulkBar({
  tickets,
  onDone,
  setNote,
  setError,
}: {
  tickets: Ticket[];
  onDone(): void;
  /** The progress and outcome, shown by the inbox (the bar goes with the selection). */
  setNote(note: string | null): void;
  setError(error: string | null): void;
}) {
  const ws = useWorkspace();
  const bulk = useBulkUpdate(ws);
  const members = useMembers(ws).data ?? [];
  const tags = (useTags(ws).data ?? []).filter((t) => t.applies_to.includes('tickets'));
  const [busy, setBusy] = useState(false);
  const n = tickets.length;
  const noun = (k: number) => count(k, 'ticket');

  const apply = async (what: string, patch: Patch) => {
    setBusy(true);
    setError(null);
    const ids = tickets.map((t) => t.id);
    let done = 0;
    try {
      // 100 at a time; the lists and counts are asked again at the end, failed or not (data/tickets.ts).
      done = await bulk.mutateAsync({
        ids,
        patch,
        progress: (n) => {
          done = n;
          setNote(`${what}: ${n} of ${noun(ids.length)}…`);
        },
      });
      setNote(`${what}: ${noun(done)} updated.`);
      onDone();
    } catch (err) {
      setNote(null);
      setError(`${what} failed after ${noun(done)}: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="bulk-bar" role="toolbar" aria-label={`Change ${noun(n)}`}>
      <span className="bulk-count">{noun(n)} selected</span>
      <BulkMenu label="Set status">
        {Object.entries(STATUS_LABEL)
          .filter(([v]) => v !== 'closed')
          .map(([v, l]) => (
            <Menu.Item
              key={v}
              className="menu-item"
              disabled={busy}
              onSelect={() => void apply(`Status ${l}`, { status: v as Ticket['status'] })}
            >
              {l}
            </Menu.Item>
          ))}
      </BulkMenu>
      <BulkMenu label="Assign">
        <Menu.Item className="menu-item" disabled={busy} onSelect={() => void apply('Unassign', { assignee_id: null })}>
          Unassigned
        </Menu.Item>
        {members
          .filter((m) => m.role !== 'viewer')
          .map((m) => (
            <Menu.Item
              key={m.user.id}
              className="menu-item"
              disabled={busy}
              onSelect={() => void apply(`Assign to ${m.user.name}`, { assignee_id: m.user.id })}
            >
              {m.user.name}
            </Menu.Item>
          ))}
      </BulkMenu>
      <BulkMenu label="Add label">
        {tags.length === 0 && <p className="menu-label">No labels yet</p>}
        {tags.map((t) => (
          <Menu.Item
            key={t.id}
            className="menu-item"
            disabled={busy}
            onSelect={() => void apply(`Add ${t.name}`, { add_tags: [t.name] })}
          >
            {t.name}
          </Menu.Item>
        ))}
      </BulkMenu>
      <BulkMenu label="Remove label">
        {tags.length === 0 && <p className="menu-label">No labels yet</p>}
        {tags.map((t) => (
          <Menu.Item
            key={t.id}
            className="menu-item"
            disabled={busy}
            onSelect={() => void apply(`Remove ${t.name}`, { remove_tags: [t.name] })}
          >
            {t.name}
          </Menu.Item>
        ))}
      </BulkMenu>
    </div>
  );
}
