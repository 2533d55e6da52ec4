// Redis frozen past the lease while an auto-extend renewal is in flight (review helper-98): the lease is
// reported lost, and the library sends a release of what that renewal may renew once Redis wakes. A
// `release()` of the caller's meanwhile (the end of runExclusive, `await using`) shares that request, yet
// must not wait for it: nothing is left of the lease, so it answers `false` at once, as any release past
// the lease does. It waited as long as Redis stayed frozen.
import { Redis as IoRedis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { type Lease, Lock, type RedisClient, Semaphore } from "../../src/index";
import type { PassThrough } from "../support/pass-through";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, usePrivateStack, useWire } from "./support/endpoints";
import { abortTime, pause, waitUntil, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const unhandled = trackUnhandledRejections();
const opened: IoRedis[] = [];
/** The locks and semaphores a test made, whose background work (the release of the lost lease) must end. */
const made: { readonly pending: Promise<void> }[] = [];
const track = <T extends { readonly pending: Promise<void> }>(owner: T): T => {
  made.push(owner);
  return owner;
};
afterEach(async () => {
  stack().redis.thaw();
  // The background release lands (Redis thawed), before the clients close: waited for, not assumed.
  await within(Promise.all(made.splice(0).map((owner) => owner.pending)), 10_000, "the background work");
  for (const client of opened.splice(0)) client.disconnect();
});

/** Redis stays frozen this long at most: far past the lease, and past any bound a release may wait. */
const FROZEN_MS = 10_000;

const clients: Record<string, () => RedisClient> = {
  "@upstash/redis": () => clientFor(stack().endpoint),
  ioredis: () => {
    const client = new IoRedis(stack().redis.url);
    opened.push(client);
    return client;
  },
};

/** Whether `settling` settles while Redis is still frozen; thaws it either way. */
async function settlesWhileFrozen(settling: Promise<unknown>): Promise<boolean> {
  const settled = await Promise.race([
    settling.then(
      () => true,
      () => true,
    ),
    pause(FROZEN_MS).then(() => false),
  ]);
  stack().redis.thaw();
  await settling.catch(() => {});
  return settled;
}

describe.each(Object.entries(clients))(
  "%s, Redis frozen past the lease with a renewal in flight",
  (_kind, client) => {
    it("Lock: release() answers false while Redis is still frozen", async () => {
      const lock = track(new Lock({ id: uniqueId("frozen-loss"), redis: client(), lease: 1_000 }));
      const lease = await lock.acquireOrThrow({ autoExtend: true });
      stack().redis.freeze();
      await within(abortTime(lease.signal), FROZEN_MS / 2, "the loss report");
      const releasing = lease.release();
      expect(await settlesWhileFrozen(releasing)).toBe(true);
      expect(await releasing).toBe(false);
      expect(unhandled()).toEqual([]);
    });

    it("Lock: runExclusive settles while Redis is still frozen", async () => {
      const lock = track(new Lock({ id: uniqueId("frozen-loss-run"), redis: client(), lease: 1_000 }));
      const running = lock.runExclusive(
        async (signal) => {
          stack().redis.freeze();
          await abortTime(signal);
        },
        { autoExtend: true },
      );
      expect(await settlesWhileFrozen(running)).toBe(true);
    });

    it("Semaphore: `await using` disposes while Redis is still frozen", async () => {
      const semaphore = track(
        new Semaphore({
          id: uniqueId("frozen-loss-sem"),
          redis: client(),
          limit: 2,
          lease: 1_000,
        }),
      );
      const block = async () => {
        await using held = await semaphore.acquireOrThrow({ autoExtend: true });
        stack().redis.freeze();
        await abortTime(held.signal);
      };
      expect(await settlesWhileFrozen(block())).toBe(true);
    });
  },
);

// The library's release of a lost lease's stray renewal failed (review helper-100): the caller's `release()`
// had answered `false` at once, so nothing sent another, and the renewed key was held for nobody.
describe.each(["Lock", "Semaphore"])("%s: the library's release of a lost lease fails once", (kind) => {
  const wire = useWire(sharedEndpoint);
  /** The pass-through's counts at the loss (in onLost, before the refused release). */
  let atLoss = { ran: 0, requests: 0 };
  const markLoss = (passThrough: PassThrough) => {
    atLoss = { ran: passThrough.ran(), requests: passThrough.stats.requests };
  };
  /**
   * Waits until, since the loss, the refused release and its re-send reached the pass-through, and the
   * re-send ran in Redis: what a fixed pause only assumed. Were none re-sent, this fails, rather than the
   * check below passing late, once the stray key expired by itself.
   */
  const resent = (passThrough: PassThrough) =>
    waitUntil(
      () => passThrough.stats.requests - atLoss.requests >= 2 && passThrough.ran() - atLoss.ran >= 1,
      "the re-sent release ran",
      { timeoutMs: 3_000 }, // within the test's 10 s, its lease's loss coming at about 5 s
    );

  it("is sent again, so nothing is held for nobody", async () => {
    const { passThrough, direct, faulty } = wire();
    const id = uniqueId("stray-fails");
    const options = {
      id,
      redis: faulty,
      lease: 5_000, // renewed every 1.7 s: the last renewal's key outlives the check below by about 1.8 s
      onLost: () => {
        passThrough.faults.reset();
        markLoss(passThrough);
        passThrough.faults.status5xx(1); // the library's release, next: refused by the REST layer, ran nothing
      },
    };
    const owner = kind === "Lock" ? new Lock(options) : new Semaphore({ ...options, limit: 1 });
    await (await owner.acquireOrThrow()).release(); // scripts cached: one request per call from here
    const lease = await owner.acquireOrThrow({ autoExtend: true });
    passThrough.faults.delayRepliesNext(100, 30_000); // renewals run, and renew the key; their answers hang
    await abortTime(lease.signal);
    expect(await lease.release()).toBe(false);
    await resent(passThrough); // the re-sent release (100 ms after the failure) ran
    passThrough.faults.reset();
    const next =
      kind === "Lock" ? new Lock({ id, redis: direct }) : new Semaphore({ id, redis: direct, limit: 1 });
    const taken = await next.acquire({ retry: { attempts: 1 } });
    expect(Boolean(taken)).toBe(true); // the stray key was released: not held for nobody until it expires
    await (taken === true ? (next as Lock).release() : taken ? taken.release() : undefined);
  });

  it("is sent again when onLost calls release() itself (review helper-102)", async () => {
    // onLost ran before the library's release started: the caller's release() sent its own, once.
    const { passThrough, direct, faulty } = wire();
    const id = uniqueId("stray-fails-onlost");
    let releasing: Promise<boolean> | undefined;
    let held: { release(): Promise<boolean> } | undefined;
    const options = {
      id,
      redis: faulty,
      lease: 5_000,
      onLost: () => {
        passThrough.faults.reset();
        markLoss(passThrough);
        passThrough.faults.status5xx(1);
        releasing = held?.release();
      },
    };
    const owner = kind === "Lock" ? new Lock(options) : new Semaphore({ ...options, limit: 1 });
    await (await owner.acquireOrThrow()).release();
    const lease = await owner.acquireOrThrow({ autoExtend: true });
    held = kind === "Lock" ? (owner as Lock) : (lease as Lease);
    passThrough.faults.delayRepliesNext(100, 30_000);
    await abortTime(kind === "Lock" ? (owner as Lock).signal : (lease as Lease).signal);
    expect(await releasing).toBe(false);
    await resent(passThrough);
    passThrough.faults.reset();
    const next =
      kind === "Lock" ? new Lock({ id, redis: direct }) : new Semaphore({ id, redis: direct, limit: 1 });
    const taken = await next.acquire({ retry: { attempts: 1 } });
    expect(Boolean(taken)).toBe(true);
    await (taken === true ? (next as Lock).release() : taken ? taken.release() : undefined);
  });
});
