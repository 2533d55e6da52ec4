// Review helper-119 (6/6): a quorum round whose majority answered while this process was frozen past the
// lease read as contention ("held", an attempt spent), nobody holding the lock. Now, as on one server
// (test/faults/frozen-reply.test.ts), the first such try is undone and sent again, off the attempts.
import { describe, expect, it } from "vitest";
import { Lock, quorum, Semaphore } from "../../src/index";
import { trackUnhandledRejections } from "../faults/support/unhandled";
import { uniqueId } from "../support/redis";
import { useMembers } from "./support/members";

const unhandled = trackUnhandledRejections();
const members = useMembers(3);
const sab = new Int32Array(new SharedArrayBuffer(4));
const block = (ms: number) => Atomics.wait(sab, 0, 0, ms);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(["lock", "semaphore"] as const)("%s on a quorum of 3", (kind) => {
  it("a try whose majority answered while the process froze past its lease is sent again", async () => {
    const opts = {
      id: uniqueId(`quorum-frozen-reply-${kind}`),
      redis: quorum(members.connect(3)),
      lease: 500,
    };
    const lock = kind === "lock" ? new Lock(opts) : new Semaphore({ ...opts, limit: 2 });
    const warm = await lock.acquireOrThrow({ retry: { attempts: 1 } }); // connections and scripts ready
    await (kind === "lock" ? (lock as Lock).release() : (warm as { release(): Promise<boolean> }).release());
    for (const server of members.servers()) server.freeze();
    const pending = lock.acquireOrThrow({ retry: { attempts: 1 } }).then(
      (lease) => ({ outcome: "acquired", lease: kind === "lock" ? (lock as Lock) : (lease as never) }),
      (error: Error & { reason?: string }) => ({
        outcome: `${error.name} ${error.reason}`,
        lease: undefined,
      }),
    );
    await pause(50); // the tries wait in the frozen servers' sockets
    for (const server of members.servers()) server.thaw();
    block(1_200); // the servers answer now; this process reads them past the 500 ms lease
    const { outcome, lease } = await pending;
    const live = (lease as { remainingMs: number } | undefined)?.remainingMs ?? 0;
    await (lease as { release(): Promise<boolean> } | undefined)?.release();
    expect({ outcome, live: live > 100, unhandled: unhandled() }).toEqual({
      outcome: "acquired",
      live: true,
      unhandled: [],
    });
  }, 20_000);
});
