// A request its client gave up on can still reach Redis, after anything sent since (review of 2026-12-03). A
// try whose caller had undone it (a per-request timeout on the client), or whose client had re-sent it and
// whose hold was then released, took the lock again for a lease, held for nobody; a fair waiter's put its
// gone waiter back in line, and the next release handed the lock to it. An undo that frees nothing, and a
// release, now leave the try's request id behind for 30 s; a try that finds its id there takes nothing.
import type { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { FairLock, Lock, Semaphore } from "../../src/index";
import type { LockAcquireConfig } from "../../src/types";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);

/** The pass-through's counts now, for {@link allRan}. */
function counts(): { ran: number; requests: number } {
  return { ran: wire().passThrough.ran(), requests: wire().passThrough.stats.requests };
}

/**
 * Waits until every request that reached the pass-through since `since` ran in Redis, the late one included:
 * the late copy landed, which a fixed pause only assumed (a loaded machine forwards it later).
 */
async function allRan(since: { ran: number; requests: number }, what: string): Promise<void> {
  const { passThrough } = wire();
  await waitUntil(() => {
    const arrived = passThrough.stats.requests - since.requests;
    return arrived > 0 && passThrough.ran() - since.ran >= arrived;
  }, what);
}
const LEASE_MS = 5_000;

interface Subject {
  acquire(
    config?: LockAcquireConfig,
  ): Promise<{ release(): Promise<boolean>; extend(ms: number): Promise<boolean> } | undefined>;
  readonly pending: Promise<void>;
}

/** Each kind as one acquire/release shape; its key: the lock key, or a semaphore's one permit. */
const kinds: Record<string, (id: string, redis: Redis) => Subject> = {
  Lock: (id, redis) => {
    const lock = new Lock({ id, redis, lease: LEASE_MS });
    return {
      acquire: async (config) => ((await lock.acquire(config)) ? lock : undefined),
      pending: lock.pending,
    };
  },
  FairLock: (id, redis) => {
    const lock = new FairLock({ id, redis, lease: LEASE_MS });
    return {
      acquire: async (config) => ((await lock.acquire(config)) ? lock : undefined),
      pending: lock.pending,
    };
  },
  Semaphore: (id, redis) => {
    const semaphore = new Semaphore({ id, redis, limit: 1, lease: LEASE_MS });
    return { acquire: (config) => semaphore.acquire(config), pending: semaphore.pending };
  },
};

/** Whether another process gets the lock at its first try, releasing it then. */
async function freeForOthers(make: (id: string, redis: Redis) => Subject, id: string, redis: Redis) {
  const other = await make(id, redis).acquire({ retry: { attempts: 1 } });
  await other?.release();
  return other !== undefined;
}

describe.each(Object.keys(kinds))("%s: a try that reaches Redis after its client gave up on it", (kind) => {
  const make = kinds[kind] as (id: string, redis: Redis) => Subject;

  it("cut off by the client's own timeout, it lands after its undo: it takes nothing", async () => {
    const { passThrough, direct } = wire();
    const { token } = sharedEndpoint();
    const timed = clientFor({ url: passThrough.url, token }, { signal: () => AbortSignal.timeout(250) });
    const id = uniqueId(`ghost-undone-${kind}`);
    const subject = make(id, timed);
    await (await subject.acquire())?.release(); // the scripts are cached: the try is small, sent by digest
    const since = counts();
    passThrough.faults.delayNext(1, 700);
    await expect(subject.acquire({ retry: { attempts: 1 } })).rejects.toMatchObject({
      code: "LOCK_REDIS_ERROR",
    });
    await allRan(since, "the try arrives");
    expect(await freeForOthers(make, id, direct)).toBe(true);
  });

  it("cut off by the client's own timeout, the acquisition's next try takes the lock; after the release the copy takes nothing", async () => {
    const { passThrough, direct } = wire();
    const { token } = sharedEndpoint();
    const timed = clientFor({ url: passThrough.url, token }, { signal: () => AbortSignal.timeout(250) });
    const id = uniqueId(`ghost-retaken-${kind}`);
    const subject = make(id, timed);
    await (await subject.acquire())?.release();
    const since = counts();
    passThrough.faults.delayNext(1, 900);
    const held = await subject.acquire(); // the first try times out, is undone; the second takes it
    expect(held).toBeDefined();
    expect(await held?.release()).toBe(true);
    await allRan(since, "the first try arrives");
    expect(await freeForOthers(make, id, direct)).toBe(true);
  });

  it.each([
    ["released", false],
    ["extended (which heads the hold's list anew), then released", true],
  ])("re-sent by the client, %s: its first copy, landing after, takes nothing", async (_name, extended) => {
    const { passThrough, direct } = wire();
    const { token } = sharedEndpoint();
    const resending = clientFor(
      { url: passThrough.url, token },
      { retry: { retries: 2, backoff: () => 20 } },
    );
    const id = uniqueId(`ghost-released-${kind}`);
    const subject = make(id, resending);
    await (await subject.acquire())?.release();
    const since = counts();
    passThrough.faults.ghostNext(1, 600);
    const held = await subject.acquire({ retry: { attempts: 1 } }); // the re-sent copy takes it
    expect(held).toBeDefined();
    if (extended) expect(await held?.extend(1_000)).toBe(true);
    expect(await held?.release()).toBe(true);
    await allRan(since, "the first copy arrives");
    expect(await freeForOthers(make, id, direct)).toBe(true);
  });
});

describe("FairLock: a waiter's try that lands after the waiter left the line", () => {
  it("does not put it back in line: the holder's release serves the next one who asks", async () => {
    const { passThrough, direct } = wire();
    const { token } = sharedEndpoint();
    const timed = clientFor({ url: passThrough.url, token }, { signal: () => AbortSignal.timeout(250) });
    const id = uniqueId("ghost-line");
    const holder = new FairLock({ id, redis: direct, lease: 10_000 });
    expect(await holder.acquire()).toBe(true);
    const waiter = new FairLock({ id, redis: timed, lease: 10_000 });
    await new FairLock({ id: `${id}-warm`, redis: timed }).acquire(); // the scripts are cached
    const since = counts();
    passThrough.faults.delayNext(1, 1_500);
    await expect(waiter.acquire({ timeout: 800 })).resolves.toBe(false);
    await allRan(since, "its first try arrives");
    await waiter.pending;
    expect(await holder.release()).toBe(true);
    expect(await new FairLock({ id, redis: direct }).acquire({ retry: { attempts: 1 } })).toBe(true);
  });
});
