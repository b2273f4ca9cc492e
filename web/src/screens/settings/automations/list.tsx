// The automations in run order: enabled switch, move up/down, delete.
import * as Switch from '@radix-ui/react-switch';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import {
  useAutomations,
  useDeleteAutomation,
  useEnableAutomation,
  useMoveAutomations,
} from '../../../data/automations';
import { useWorkspace } from '../../../lib/context';
import { useIsAdmin } from '../../../lib/role';
import { ConfirmButton } from '../../../ui/form';
import { ErrorNote, PageTitle, ReadOnlyNote } from '../../../ui/page';
import { Loaded, ScrollTable } from '../shared';
import { triggerText } from './choices';

export function AutomationList() {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const list = useAutomations(ws, admin);
  const enable = useEnableAutomation(ws);
  const moveRows = useMoveAutomations(ws);
  const remove = useDeleteAutomation(ws);
  const [error, setError] = useState<unknown>(null);
  /** A change whose failure is said under the list. */
  const change = async (send: () => Promise<unknown>) => {
    setError(null);
    try {
      await send();
    } catch (err) {
      setError(err);
    }
  };
  const rows = list.data?.data ?? [];
  const move = async (i: number, by: -1 | 1) => {
    const a = rows[i];
    const b = rows[i + by];
    if (!a || !b) return;
    // Swap their places; equal positions (run by id) are told apart first.
    const pa = a.position === b.position ? b.position + (by === 1 ? 1 : -1) : b.position;
    await change(() =>
      moveRows.mutateAsync([
        { id: a.id, position: Math.max(0, pa) },
        { id: b.id, position: a.position },
      ]),
    );
  };
  return (
    <div className="integrations">
      <PageTitle
        actions={
          admin ? (
            <Link to="/settings/$" params={{ _splat: 'automations/new' }} className="button primary-link">
              New automation
            </Link>
          ) : undefined
        }
      >
        Automations
      </PageTitle>
      <p className="hint">
        When something happens to a ticket and every condition holds, the actions run, in order. Automations run from
        top to bottom.
      </p>
      {!admin ? (
        <ReadOnlyNote what="see and change automations" />
      ) : (
        <Loaded
          query={list}
          what="Could not load the automations"
          empty={rows.length === 0 && <>No automations yet. Make one with “New automation”.</>}
        >
          <ScrollTable caption="Automations in the order they run">
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Name</th>
                <th scope="col">When</th>
                <th scope="col">Runs</th>
                <th scope="col">Enabled</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a, i) => (
                <tr key={a.id}>
                  <td className="nowrap">
                    {i + 1}
                    <button
                      type="button"
                      className="icon-button small"
                      disabled={i === 0}
                      onClick={() => void move(i, -1)}
                      aria-label={`Move ${a.name} up`}
                    >
                      ↑
                    </button>
                    <button
                      type="button"
                      className="icon-button small"
                      disabled={i === rows.length - 1}
                      onClick={() => void move(i, 1)}
                      aria-label={`Move ${a.name} down`}
                    >
                      ↓
                    </button>
                  </td>
                  <td>
                    <Link to="/settings/$" params={{ _splat: `automations/${a.id}` }}>
                      {a.name}
                    </Link>
                  </td>
                  <td>{triggerText(a.trigger)}</td>
                  <td>{a.run_count}</td>
                  <td>
                    <Switch.Root
                      className="switch"
                      checked={a.enabled}
                      aria-label={`${a.name} enabled`}
                      onCheckedChange={(enabled) => change(() => enable.mutateAsync({ id: a.id, enabled }))}
                    >
                      <Switch.Thumb className="switch-thumb" />
                    </Switch.Root>
                  </td>
                  <td>
                    <ConfirmButton
                      title={`Delete the automation “${a.name}”?`}
                      description="It stops acting on tickets at once. What it already did stays."
                      confirm="Delete"
                      onConfirm={() => remove.mutateAsync(a.id)}
                    >
                      Delete<span className="visually-hidden"> {a.name}</span>
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </ScrollTable>
        </Loaded>
      )}
      <ErrorNote error={error} what="Could not change the automation" />
    </div>
  );
}
