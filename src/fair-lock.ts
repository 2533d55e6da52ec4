import { Lock } from "./lock";
import { permitStore } from "./permits/store";
import type { StoreMaker } from "./store";

const keepsALine = permitStore("lock-key", true);

/**
 * A {@link Lock} that serves waiters in the order they arrived: they queue in Redis beside the
 * lock key, and when the lock is freed only the first in line may take it. A release hands the lock
 * straight to that waiter and announces it to it alone, so a release wakes one waiter, not all, and
 * the waiter holds without a request of its own. A waiter that gives up leaves the line; one that
 * dies keeps its place until its entry expires (`retry.maxDelay` + 2 s after its last try). The key
 * and its value are a Lock's, so a FairLock excludes every Lock on the key, 0.2's included; an
 * unfair acquire on the key ignores the line. Not on a quorum.
 *
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
