// What the resources' hooks share: reading every page of a cursor-paged list, and how long the
// workspace's definitions (members, teams, labels, fields) stay fresh before they are asked again
// (the live events keep them current meanwhile: lib/queries.ts applyEvent).
type Page<T> = { data: T[]; next_cursor?: string | null };

/** Every page of a list, at most 20 (2,000 rows at 100 a page: more than a picker can show). */
export async function allPages<T>(get: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) {
    const p = await get(cursor);
    out.push(...p.data);
    if (!p.next_cursor) break;
    cursor = p.next_cursor;
  }
  return out;
}

export const DEFINITIONS = { staleTime: 5 * 60_000 };
