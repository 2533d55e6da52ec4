// Review helper-119 (6/6): a quorum round whose majority answered while this process was frozen past the
// lease read as contention ("held", an attempt spent), nobody holding the lock. Now, as on one server
// (test/faults/frozen-reply.test.ts), the first such try is undone and sent again, off the attempts.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Lock, quorum, Semaphore } from "../../src/index";
import { ACQUIRED_THEN_FREE, heldThenFree } from "../faults/support/held-then-free";
import { trackUnhandledRejections } from "../faults/support/unhandled";
import { uniqueId } from "../support/redis";
import { useHttpMembers, useMembers } from "./support/members";

const unhandled = trackUnhandledRejections();
const members = useMembers(3);
const sab = new Int32Array(new SharedArrayBuffer(4));
const block = (ms: number) => Atomics.wait(sab, 0, 0, ms);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dead: IoRedis[] = [];
afterAll(() => {
  for (const client of dead) client.disconnect();
});

/** A member that is down: nothing listens on its port, and its client fails each command at once. */
function downMember(): IoRedis {
  const options = {
    enableOfflineQueue: false,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  };
  const client = new IoRedis(1, "127.0.0.1", options);
  client.on("error", () => {});
  dead.push(client);
  return client;
}

describe.each([
  ["lock", 3],
  ["semaphore", 3],
  ["lock", 2],
  ["semaphore", 2],
] as const)("%s on a quorum of 3, %i up", (kind, up) => {
  it("a try whose majority answered while the process froze past its lease is sent again", async () => {
    // Review helper-122 (16/16): with a member down, the late majority read as an outage.
    const redis = quorum(up === 3 ? members.connect(3) : [...members.connect(2), downMember()]);
    // 900 ms: each member's bound is a third of the lease, and 166 ms (a 500 ms lease) was missed on a
    // loaded machine by another case of this file.
    const opts = { id: uniqueId(`quorum-frozen-reply-${kind}`), redis, lease: 900 };
    const lock = kind === "lock" ? new Lock(opts) : new Semaphore({ ...opts, limit: 2 });
    const warm = await lock.acquireOrThrow({ retry: { attempts: 1 } }); // connections and scripts ready
    await (kind === "lock" ? (lock as Lock).release() : (warm as { release(): Promise<boolean> }).release());
    for (const server of members.servers().slice(0, up)) server.freeze();
    const pending = lock.acquireOrThrow({ retry: { attempts: 1 } }).then(
      (lease) => ({ outcome: "acquired", lease: kind === "lock" ? (lock as Lock) : (lease as never) }),
      (error: Error & { reason?: string }) => ({
        outcome: `${error.name} ${error.reason}`,
        lease: undefined,
      }),
    );
    await pause(50); // the tries wait in the frozen servers' sockets
    for (const server of members.servers().slice(0, up)) server.thaw();
    block(1_200); // the servers answer now; this process reads them past the 900 ms lease
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

describe("a quorum over @upstash/redis, frozen before fetch sent the round", () => {
  // Found at stop 49 with the single-server case (test/faults/frozen-reply.test.ts): fetch sends in a later
  // tick, so each member's request waited in this process through the freeze, and its bound, overdue on the
  // thaw, ran out before the member could answer: an outage of every member, with nothing wrong.
  const http = useHttpMembers(3);

  it("the round is waited for again, and the try is sent again: it acquires", async () => {
    const redis = quorum(http().map((member) => member.faulty));
    // A member's bound is a third of the lease: 500 ms left 166 ms, which members behind the in-process
    // proxy missed on a loaded machine (a loaded run of 2026-12-06: "no reply within 166 ms").
    const lock = new Lock({ id: uniqueId("quorum-frozen-unsent"), redis, lease: 1_500 });
    expect(await lock.acquire()).toBe(true); // scripts loaded
    await lock.release();
    const pending = lock.acquireOrThrow({ retry: { attempts: 1 } }).then(
      () => "acquired",
      (error: Error) => error.message,
    );
    block(3_000); // past the lease, as the other cases freeze past theirs
    const fresh = () => new Lock({ id: lock.id, redis: quorum(http().map((member) => member.direct)) });
    expect({ ...(await heldThenFree(lock, pending, fresh)), unhandled: unhandled() }).toEqual(
      ACQUIRED_THEN_FREE,
    );
  }, 30_000);
});
