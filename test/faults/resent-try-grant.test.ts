// Review helper-145 (stop 51; 6/6 cases failed 5/5 runs, 3/3 passed before eaf7da5): a fair waiter's try ran
// and queued it, but its reply was lost, and @upstash/redis sent the same request again. Meanwhile the holder's
// release handed the permit to the waiter. The copy (same request id, same `now` on the waiter's clock) landed
// after the waiter left the line, and eaf7da5 let such a try confirm only the hold it took itself: it was
// refused, and the waiter failed "held by another owner" while its own grant held. A try sent before its
// waiter left confirms the hold a release handed that waiter too.
//
// Review helper-147 (5/5, 4/4 cases), and fair-queue-schedules.test.ts's seed 2 in a loaded run: such a copy,
// landing on the grant of a waiter about to give up, added its try to the permit's list, which the waiter's
// leave does not free: the permit stayed held for nobody for a lease. The copy now holds under the
// waiter's name, adding nothing of its own.
import { describe, expect, it } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

/** Acquires with `config`; resolves with how to release, or undefined when it did not acquire. */
type Acquire = (config: object) => Promise<(() => Promise<boolean>) | undefined>;
const kinds: Record<string, (id: string, redis: ReturnType<typeof clientFor>) => Acquire> = {
  FairLock: (id, redis) => {
    const lock = new FairLock({ id, redis, lease: 10_000, wakeOnRelease: false });
    return async (config) => ((await lock.acquire(config)) ? () => lock.release() : undefined);
  },
  "fair Semaphore": (id, redis) => {
    const permits = new Semaphore({ id, redis, lease: 10_000, limit: 1, fair: true, wakeOnRelease: false });
    return async (config) => {
      const lease = await permits.acquire(config);
      return lease && (() => lease.release());
    };
  },
};

/** `kind` held over a direct client, and a waiter's `acquire` over one that re-sends, its scripts cached. */
async function heldWithWaiter(kind: string) {
  const { passThrough, direct } = wire();
  const make = kinds[kind] as (id: string, redis: ReturnType<typeof clientFor>) => Acquire;
  const id = uniqueId("resent-try-grant");
  const release = await make(id, direct)({});
  expect(release).toBeDefined();
  // Re-sends a request whose connection broke, as @upstash/redis does.
  const resending = clientFor({ url: passThrough.url, token: stack().endpoint.token });
  const warm = await make(uniqueId("resent-try-warm"), resending)({});
  expect(await warm?.()).toBe(true);
  return { passThrough, direct, id, release, acquire: make(id, resending) };
}

describe.each(Object.keys(kinds))(
  "%s: a re-sent try of a queued waiter, landing after a release handed it the permit",
  (kind) => {
    it.each([
      ["plain", {}],
      ["with fencing", { fencing: true }],
      ["with a uuid", { uuid: crypto.randomUUID() }],
    ] as const)(
      "acquires (%s)",
      async (_how, extra) => {
        const { passThrough, direct, id, release, acquire } = await heldWithWaiter(kind);
        // Its first try runs at once (it queues), its reply is held 1.5 s, then its connection is cut: sent again.
        passThrough.faults.dropReplies(1);
        passThrough.faults.delayRepliesNext(1, 1_500);
        const acquiring = acquire({ timeout: 3_000, retry: { delay: 5_000 }, ...extra });
        await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
        expect(await release?.()).toBe(true); // hands the permit to the waiter
        const acquired = await acquiring;
        expect({ acquired: acquired !== undefined }).toEqual({ acquired: true });
        expect(await acquired?.()).toBe(true);
      },
      20_000,
    );
  },
);

describe.each(Object.keys(kinds))(
  "%s: a late copy of a queued try lands on the waiter's grant, then the waiter gives up",
  (kind) => {
    it.each([
      ["plain", {}],
      ["with a uuid", { uuid: crypto.randomUUID() }],
    ] as const)(
      "leaves the permit free for the next (%s)",
      async (_how, extra) => {
        const { passThrough, direct, id, release, acquire } = await heldWithWaiter(kind);
        const startedAt = performance.now();
        passThrough.faults.ghostNext(1, 3_000); // the first try: sent again at once (it queues), a copy lands at +3 s
        const controller = new AbortController();
        const acquiring = acquire({
          retry: { attempts: 2, delay: 20_000 },
          signal: controller.signal,
          ...extra,
        });
        await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
        expect(await release?.()).toBe(true); // hands the permit to the waiter
        await pause(Math.max(0, startedAt + 3_700 - performance.now())); // the copy landed on the grant
        controller.abort(); // the waiter gives up: it leaves the line, handing its grant back
        await expect(acquiring).rejects.toThrow();
        const key = kind === "FairLock" ? id : `{${id}}:permit:1`;
        await waitUntil(async () => (await direct.get(key)) === null, "the grant freed by the leave");
        const next = await (kinds[kind] as (id: string, redis: typeof direct) => Acquire)(
          id,
          direct,
        )({
          retry: { attempts: 1 },
        });
        expect(next).toBeDefined();
        expect(await next?.()).toBe(true);
      },
      30_000,
    );
  },
);
