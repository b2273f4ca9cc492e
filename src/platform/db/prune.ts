// Deleting old rows without long locks: workspace by workspace (every tenant index leads with
// workspace_id), in batches of a bounded size, until a batch comes back short.

/**
 * Runs `deleteBatch(workspaceId, limit)` for each workspace until it deletes fewer than `batch`
 * rows; returns how many rows were deleted in all.
 */
export async function pruneInBatches(
  workspaceIds: string[],
  batch: number,
  deleteBatch: (workspaceId: string, limit: number) => Promise<bigint | number | undefined>,
): Promise<number> {
  let total = 0;
  for (const workspaceId of workspaceIds) {
    for (;;) {
      const n = Number((await deleteBatch(workspaceId, batch)) ?? 0);
      total += n;
      if (n < batch) break;
    }
  }
  return total;
}
