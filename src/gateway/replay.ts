// A widget's join with {since: seq}: the public events of its contact topic it missed, read from
// the event log (docs/realtime.md "Replay"), then the live ones.
import type { Database } from '../platform/db/index.js';
import { rowToEnvelope } from '../platform/events/publisher.js';
import { forWidget } from './hub.js';
import { oldestSeq, publicEventsOf } from './queries.js';

/** Missed events a widget's join replays at most (more: resync, the widget reloads). */
export const MAX_REPLAYED = 500;

/** A join's `since`: a seq (a non-negative integer), or null. */
export const sinceOf = (v: unknown): number | null =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;

export interface Missed {
  events: Array<NonNullable<ReturnType<typeof forWidget>>>;
  resync: boolean;
}

/**
 * The public events of a contact topic after `since` up to `upTo`, in the widget's form;
 * resync when some are no longer kept (retention) or there are more than a replay sends.
 */
export async function missedEvents(
  db: Database['db'],
  wid: string,
  topic: string,
  since: number,
  upTo: number,
): Promise<Missed> {
  const first = await oldestSeq(db, wid);
  const rows = await publicEventsOf(db, wid, topic, since, upTo, MAX_REPLAYED + 1);
  const events = rows
    .slice(0, MAX_REPLAYED)
    .map((r) => forWidget(rowToEnvelope(r), topic))
    .filter((e) => e !== null);
  return { events, resync: rows.length > MAX_REPLAYED || first === null || first > since + 1 };
}
