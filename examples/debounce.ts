// #region readme
import { Debounce } from "@upstash/lock";
import { Redis } from "@upstash/redis";

const rebuildSearchIndex = new Debounce({
  id: "rebuild-search-index",
  redis: Redis.fromEnv(),
  wait: 2_000, // run once things have been quiet for 2 s
  callback: async (reason: string) => {
    await rebuild(reason);
  },
});

// Call it on every edit, from any number of processes: only the last call of a burst rebuilds.
export function onDocumentEdited(documentId: string): Promise<boolean> {
  return rebuildSearchIndex.call(`edited ${documentId}`);
}
// #endregion

/** Stands in for the reader's own work; the README test swaps in its own. */
export const work = { rebuild: async (_reason: string): Promise<void> => {} };
function rebuild(reason: string): Promise<void> {
  return work.rebuild(reason);
}
