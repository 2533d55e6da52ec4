// #region readme
import type { Lock } from "@upstash/lock";
import type { FencedStore } from "./fenced-store";

// Any Lock: `fencing: true` here, or in its options, gives each acquisition a token.
export async function writeUnderLock(lock: Lock, store: FencedStore, key: string, value: string) {
  await using held = await lock.acquireOrThrow({ fencing: true });
  // Larger than every token issued before for this id: the store refuses a write with a smaller one.
  return store.write(key, value, held.fencingToken as number);
}
// #endregion

export { FencedStore } from "./fenced-store";
