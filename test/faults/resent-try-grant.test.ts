// Review helper-145 (stop 51; 6/6 cases failed 5/5 runs, 3/3 passed before eaf7da5): a fair waiter's try ran
// and queued it, but its reply was lost, and @upstash/redis sent the same request again. Meanwhile the holder's
// release handed the permit to the waiter. The copy (same request id, same `now` on the waiter's clock) landed
// after the waiter left the line, and eaf7da5 let such a try confirm only the hold it took itself: it was
// refused, and the waiter failed "held by another owner" while its own grant held. A try sent before its
// waiter left confirms the hold a release handed that waiter too.
import { describe, expect, it } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

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
        const { passThrough, direct } = wire();
        const { token } = stack().endpoint;
        const make = kinds[kind] as (id: string, redis: ReturnType<typeof clientFor>) => Acquire;
        const id = uniqueId("resent-try-grant");
        const release = await make(id, direct)({});
        expect(release).toBeDefined();
        const resending = clientFor({ url: passThrough.url, token }); // re-sends a request whose connection broke
        const acquire = make(id, resending);
        const warm = await make(uniqueId("resent-try-warm"), resending)({}); // the scripts are cached
        expect(await warm?.()).toBe(true);
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
