import { Lock } from "./lock";
import { permitStore } from "./permits/store";
import type { StoreMaker } from "./store";

const keepsALine = /* @__PURE__ */ permitStore("lock-key", true);

/**
 * A {@link Lock} serving waiters in arrival order, queued in Redis beside the key: a release hands the lock
 * to the first in line, waking only it; it holds without a request (with `fencing`, one try issues its
 * token). A waiter giving up leaves the line; a
 * dead one keeps its place until its entry expires (`retry.maxDelay` + 2 s after its last try), and a grant
 * to it made just before then runs as long again. With a Lock's key and value, it excludes any Lock on it,
 * 0.2's too; unfair acquires ignore the line. Not on a quorum.
 * @example
 * const lock = new FairLock({ id: "queue:drain", redis: Redis.fromEnv() });
 * await using held = await lock.acquireOrThrow({ timeout: 30_000 }); // waits in line, in order
 */
export class FairLock extends Lock {
  /** @internal */
  protected override storeKind(): { readonly fair: boolean; readonly make: StoreMaker } {
    return { fair: true, make: keepsALine };
  }
}
