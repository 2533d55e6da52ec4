// #region readme
import { Lock, LockAcquisitionError, LockLostError } from "@upstash/lock";
import { Redis } from "@upstash/redis";

export async function rebuildReport(): Promise<"done" | "busy" | "lost"> {
  const lock = new Lock({ id: "report:rebuild", redis: Redis.fromEnv(), lease: 5_000 });
  try {
    return await lock.runExclusive(
      async (signal) => {
        for (const page of await listPages()) {
          signal.throwIfAborted(); // stop at once if the lock was lost
          await renderPage(page, signal);
        }
        return "done" as const;
      },
      { autoExtend: true, timeout: 2_000 }, // renew every ~1.7 s; wait at most 2 s to get the lock
    );
  } catch (error) {
    if (error instanceof LockAcquisitionError && error.reason !== "redis-error") return "busy"; // someone else is rebuilding it
    if (error instanceof LockLostError) return "lost"; // we stopped half-way; the next run redoes it
    throw error;
  }
}
// #endregion

/** Stand in for the reader's own work; the README test swaps in its own. */
export const work = {
  listPages: async (): Promise<string[]> => [],
  renderPage: async (_page: string, _signal: AbortSignal): Promise<void> => {},
};
function listPages(): Promise<string[]> {
  return work.listPages();
}
function renderPage(page: string, signal: AbortSignal): Promise<void> {
  return work.renderPage(page, signal);
}
