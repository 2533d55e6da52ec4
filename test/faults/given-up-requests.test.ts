// Requests their client gave up on (a per-request timeout) that still reach Redis, against one instance's
// later calls with the same uuid, and a lease reported lost here whose key lives on (review helper-46 and
// helper-47 of 2026-12-04). A late release ended the hold a same-uuid acquire here had just confirmed (two
// holders); the undo of a same-uuid try, landing while that uuid held, named the try nowhere, so its late copy
// took the lock again after the release (held by nobody); a late renewal marked a same-uuid try's hold
// confirmed, so that try's undo could not free it; extend() on a lease lost here extended the key for
// nobody; a fair waiter's late poll moved its deadline into the past, and the next sweep sent it behind the
// waiter after it; an extend() that landed after its lease ran out here kept the key held for nobody
// (helper-49), and so did one that landed after an abandoned same-uuid try took the key (helper-48). (An acquire with the held uuid that took another caller's turn: seeded-turn.test.ts.)
import { describe, expect, it } from "vitest";
import { FairLock, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import type { LockAcquireConfig } from "../../src/types";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);

/** A client through the pass-through that gives each request `patience()` ms, then gives up on it. */
function impatientClient(patience: () => number) {
  const { passThrough } = wire();
  const { token } = sharedEndpoint();
  return clientFor({ url: passThrough.url, token }, { signal: () => AbortSignal.timeout(patience()) });
}

/** A Lock of `redis` whose scripts Redis has cached, so each call is one request, sent by digest. */
async function warmLock(id: string, redis: ReturnType<typeof impatientClient>) {
  const lock = new Lock({ id, redis, lease: 10_000 });
  expect(await lock.acquire({ uuid: crypto.randomUUID() })).toBe(true);
  expect(await lock.release()).toBe(true);
  return lock;
}

/** A Lock, FairLock or one-permit Semaphore of `redis` as one shape; `key` is what it holds in Redis. */
function subjectOf(kind: string, id: string, redis: ReturnType<typeof impatientClient>, lease = 10_000) {
  const lock = kind === "FairLock" ? new FairLock({ id, redis, lease }) : new Lock({ id, redis, lease });
  const semaphore = new Semaphore({ id, redis, limit: 1, lease });
  const isSemaphore = kind === "Semaphore";
  return {
    acquire: async (config?: LockAcquireConfig) =>
      isSemaphore ? semaphore.acquire(config) : (await lock.acquire(config)) ? lock : undefined,
    pending: () => (isSemaphore ? semaphore.pending : lock.pending),
    key: isSemaphore ? companionKey(id, ":permit:1") : id,
  };
}

/**
 * A same-uuid try that runs at once while its answer is held back 2 s, and whose caller gives up after
 * 400 ms (or that waits here, sending nothing): resolves with the key's PTTL once all is settled (-2: gone).
 */
async function abandonSameUuidTry(subject: ReturnType<typeof subjectOf>, uuid: string): Promise<number> {
  const { passThrough, direct } = wire();
  passThrough.faults.delayRepliesNext(1, 2_000);
  const signal = AbortSignal.timeout(400);
  expect(
    await subject.acquire({ uuid, retry: { attempts: 1 }, signal }).catch(() => undefined),
  ).toBeUndefined();
  await pause(2_500);
  await subject.pending();
  return direct.pttl(subject.key);
}

describe("a same-uuid acquire here after a release its client gave up on", () => {
  it("waits (for its turn, and for the release, which may still land): never two holders", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-release");
    const uuid = crypto.randomUUID();
    const lock = await warmLock(
      id,
      impatientClient(() => 250),
    );
    expect(await lock.acquire({ uuid })).toBe(true);
    passThrough.faults.delayNext(1, 1_500); // Redis gets the release 1.5 s after its client gave up
    await expect(lock.release()).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    const again = await lock.acquire({ uuid, retry: { attempts: 3, delay: 100 } });
    await pause(1_800); // the release lands
    const other = new Lock({ id, redis: direct, lease: 10_000 });
    const otherHolds = await other.acquire({ retry: { attempts: 1 } });
    expect({ again, stillHeldHere: lock.remainingMs > 0, otherHolds }).toEqual({
      again: false,
      stillHeldHere: false,
      otherHolds: true,
    });
    await other.release();
  });

  it("on a Semaphore, which has no turn to wait for, too", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-permit-release");
    const uuid = crypto.randomUUID();
    const semaphore = new Semaphore({ id, redis: impatientClient(() => 250), limit: 1, lease: 10_000 });
    await (await semaphore.acquire())?.release(); // the scripts are cached
    const held = await semaphore.acquire({ uuid });
    expect(held).toBeDefined();
    passThrough.faults.delayNext(1, 1_500); // Redis gets the release 1.5 s after its client gave up
    await expect(held?.release()).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    const waited = await semaphore
      .acquireOrThrow({ uuid, retry: { attempts: 3, delay: 100 } })
      .catch((error: Error) => error.message);
    expect(waited).toContain("a release, renewal or extend of this uuid here was still unanswered");
    const again = await semaphore.acquire({ uuid, retry: { attempts: 3, delay: 100 } });
    await pause(1_800); // the release lands
    const other = await new Semaphore({ id, redis: direct, limit: 1, lease: 10_000 }).acquire({
      retry: { attempts: 1 },
    });
    expect({
      again: again !== undefined,
      stillHeldHere: (again?.remainingMs ?? 0) > 0,
      other: !!other,
    }).toEqual({
      again: false,
      stillHeldHere: false,
      other: true,
    });
    await other?.release();
  });
});

describe("a same-uuid try its client gave up on, while that uuid holds here", () => {
  it("takes nothing when it lands after the hold's release", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-same-uuid-try");
    const uuid = crypto.randomUUID();
    const lock = await warmLock(
      id,
      impatientClient(() => 250),
    );
    expect(await lock.acquire({ uuid })).toBe(true);
    passThrough.faults.delayNext(1, 800); // the try reaches Redis 800 ms after it was sent
    await expect(lock.acquire({ uuid, retry: { attempts: 1 } })).rejects.toMatchObject({
      code: "LOCK_REDIS_ERROR",
    });
    expect(await lock.release()).toBe(true); // the hold the try would have confirmed
    await pause(1_000); // the try lands
    await lock.pending;
    expect(await direct.get(id)).toBeNull();
  });

  it("on a Semaphore, too", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-same-uuid-permit-try");
    const uuid = crypto.randomUUID();
    const semaphore = new Semaphore({ id, redis: impatientClient(() => 250), limit: 1, lease: 10_000 });
    await (await semaphore.acquire())?.release(); // the scripts are cached
    const held = await semaphore.acquire({ uuid });
    passThrough.faults.delayNext(1, 800); // the try reaches Redis 800 ms after it was sent
    await expect(semaphore.acquire({ uuid, retry: { attempts: 1 } })).rejects.toMatchObject({
      code: "LOCK_REDIS_ERROR",
    });
    expect(await held?.release()).toBe(true); // the hold the try would have confirmed
    await pause(1_000); // the try lands
    await semaphore.pending;
    const other = await new Semaphore({ id, redis: direct, limit: 1 }).acquire({ retry: { attempts: 1 } });
    expect(other).toBeDefined();
    await other?.release();
  });
});

describe("a same-uuid try here after a renewal its client gave up on", () => {
  it("waits for the renewal, which may still land: an abandoned try's hold is freed", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-renewal-same-uuid");
    const uuid = crypto.randomUUID();
    let patience = 10_000; // short only for the request given up on: a busy machine may take 250 ms
    const lock = await warmLock(
      id,
      impatientClient(() => patience),
    );
    expect(await lock.acquire({ uuid, autoExtend: { interval: 600 } })).toBe(true);
    patience = 250;
    const before = wire().requests();
    passThrough.faults.delayNext(1, 1_500); // the first renewal reaches Redis 1.5 s after it was sent
    await waitUntil(() => wire().requests() > before, "the renewal was sent");
    patience = 10_000;
    await pause(300); // its client gave up on it
    expect(await lock.release()).toBe(true);
    // A try now would take the free key, its answer coming only after the renewal landed and marked that hold
    // confirmed; its caller gives up first, and the try's undo could then free nothing.
    passThrough.faults.delayRepliesNext(1, 2_000);
    const signal = AbortSignal.timeout(400);
    const again = await lock.acquire({ uuid, retry: { attempts: 1 }, signal }).catch(() => false);
    expect(again).toBe(false);
    await pause(2_500);
    await lock.pending;
    expect(await direct.get(id)).toBeNull();
  });
});

describe("extend() on a lease lost here while its key lives on", () => {
  it("answers false and extends nothing: the key would be held for nobody", async () => {
    const { direct } = wire();
    const id = uniqueId("extend-after-loss");
    const lock = new Lock({ id, redis: direct, lease: 1_000 });
    const lease = (await lock.acquireOrThrow()).signal;
    // The key outlives the local deadline (which errs early: drift allowance, a stalled timer), here by far.
    expect(await direct.pexpire(id, 10_000)).toBe(1);
    await waitUntil(() => lease.aborted, "the lease was reported lost");
    expect((lease.reason as { reason?: string }).reason).toBe("expired");
    expect(await lock.extend(30_000)).toBe(false);
    expect(await direct.pttl(id)).toBeLessThanOrEqual(10_000);
    await direct.del(id);
  });
});

describe("an extend() its client gave up on, that still reaches Redis after the lease was reported expired", () => {
  // Review helper-49 (2026-12-04): the extend landed, the lease here ran out at its old deadline, and the key
  // (or permit) stayed held for nobody for the extend's amount. As for a renewal, the stray is released.
  it.each(["Lock", "Semaphore"])("%s: the key is released, not held for nobody", async (kind) => {
    const { passThrough, direct } = wire();
    const id = uniqueId(`late-extend-${kind}`);
    const subject = subjectOf(
      kind,
      id,
      impatientClient(() => 250),
      1_500,
    );
    await (await subject.acquire())?.release(); // the scripts are cached: one request per call
    const held = await subject.acquire();
    const signal = held?.signal as AbortSignal;
    passThrough.faults.delayNext(1, 600); // the extend reaches Redis 600 ms after it was sent
    await expect(held?.extend(20_000)).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    await waitUntil(() => signal.aborted, "the lease was reported lost", { timeoutMs: 3_000 });
    expect((signal.reason as { reason?: string }).reason).toBe("expired");
    await pause(1_000); // past the lease the acquire set
    await subject.pending();
    expect(await direct.pttl(subject.key)).toBe(-2);
  });
});

describe("a same-uuid try here after an extend() its client gave up on", () => {
  // Review helper-48 (2026-12-04): the extend landed after the try took the free key and headed its list, so
  // the try's undo (its caller gave up) could not free it: held by nobody for the lease and the extension.
  it.each(["Lock", "Semaphore"])("%s: waits for the extend, which may still land", async (kind) => {
    const { passThrough } = wire();
    const uuid = crypto.randomUUID();
    let patience = 10_000; // short only for the request given up on: a busy machine may take 250 ms
    const subject = subjectOf(
      kind,
      uniqueId(`late-extend-same-uuid-${kind}`),
      impatientClient(() => patience),
    );
    const warm = await subject.acquire({ uuid: crypto.randomUUID() }); // the scripts are cached
    expect(await warm?.extend(10)).toBe(true);
    expect(await warm?.release()).toBe(true);
    const held = await subject.acquire({ uuid });
    patience = 250;
    passThrough.faults.delayNext(1, 500); // the extend reaches Redis 500 ms after it was sent
    await expect(held?.extend(5_000)).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    patience = 10_000; // the release's and the try's client waits: the try's caller gives up instead
    expect(await held?.release()).toBe(true);
    expect(await abandonSameUuidTry(subject, uuid)).toBe(-2);
  });
});

describe("a same-uuid try here after a renewal whose client re-sent it (a cut connection)", () => {
  // Review helper-48 (2026-12-04): the re-sent copy's answer ended the wait; the first copy landed after a
  // same-uuid try took the free key and marked that hold confirmed (`*`), so the try's undo freed nothing.
  it.each(["Lock", "Semaphore"])(
    "%s: the first copy, landing late, leaves the try undoable",
    async (kind) => {
      const { passThrough } = wire();
      const uuid = crypto.randomUUID();
      const patience = 10_000; // a busy machine may take 250 ms: the re-send is the client's, on the cut
      const subject = subjectOf(
        kind,
        uniqueId(`ghost-renewal-same-uuid-${kind}`),
        impatientClient(() => patience),
      );
      await (await subject.acquire({ uuid: crypto.randomUUID() }))?.release(); // the scripts are cached
      const held = await subject.acquire({ uuid, autoExtend: { interval: 600 } });
      await held?.getStatus(); // so is the renewal's
      const before = wire().requests();
      passThrough.faults.ghostNext(1, 1_000); // the renewal's first copy reaches Redis 1 s late
      await waitUntil(() => wire().requests() >= before + 2, "the renewal and its re-sent copy were sent");
      await pause(100); // the re-sent copy was answered
      expect(await held?.release()).toBe(true); // the try's client waits: its caller gives up instead
      expect(await abandonSameUuidTry(subject, uuid)).toBe(-2);
    },
  );
});

describe("FairLock: a waiter's poll whose first copy lands late (its client re-sent it)", () => {
  it("keeps the waiter first in line: the stale copy does not move its deadline earlier", async () => {
    const { passThrough, faulty, direct } = wire();
    const id = uniqueId("fair-late-poll");
    const options = { id, lease: 10_000, retry: { attempts: 100, delay: 100, maxDelay: 100 } };
    await new FairLock({ ...options, id: `${id}:warm`, redis: faulty }).acquire(); // the scripts are cached
    const holder = new FairLock({ ...options, redis: direct });
    expect(await holder.acquire()).toBe(true);
    const before = wire().requests();
    const first = new FairLock({ ...options, redis: faulty });
    const firstHolds = first.acquire({ timeout: 9_000 });
    await waitUntil(() => wire().requests() > before, "the first waiter joined the line");
    const second = new FairLock({ ...options, redis: direct });
    const secondHolds = second.acquire({ timeout: 9_000 });
    await pause(200);
    // The client re-sends a poll cut off at once; its first copy reaches Redis 2.5 s later, with a deadline
    // (2.1 s from its send) already past: the sweep before any later try would drop the waiter from the line.
    passThrough.faults.ghostNext(1, 2_500);
    await pause(3_000);
    expect(await holder.release()).toBe(true);
    const winner = await Promise.race([firstHolds.then(() => "first"), secondHolds.then(() => "second")]);
    expect(winner).toBe("first");
    expect(await firstHolds).toBe(true);
    expect(await first.release()).toBe(true);
    expect(await secondHolds).toBe(true);
    await second.release();
  });
});

describe("a release or extend whose re-sent copy found the hold gone, and whose first copy lands late", () => {
  // Read off the scripts (2026-12-04): only a release that freed something, or an extend that found its
  // token, kept its call id, so the late first copy of one that missed took effect on a newer hold of the
  // same uuid: the release deleted it (the holder here still held it: two holders), the extend kept it.
  /** A hold of `uuid` whose key is gone (a restart without persistence, an eviction), both calls cached. */
  async function lostHold(kind: string, name: string, uuid: string) {
    const subject = subjectOf(
      kind,
      uniqueId(`${name}-${kind}`),
      impatientClient(() => 10_000),
    );
    const warm = await subject.acquire({ uuid: crypto.randomUUID() });
    await warm?.extend(1);
    await warm?.release();
    const held = await subject.acquire({ uuid });
    expect(held).toBeDefined();
    await wire().direct.del(subject.key);
    return { subject, held };
  }

  it.each(["Lock", "Semaphore"])("%s: the late release leaves a newer same-uuid hold alone", async (kind) => {
    const { passThrough, direct } = wire();
    const uuid = crypto.randomUUID();
    const { subject, held } = await lostHold(kind, "ghost-missed-release", uuid);
    passThrough.faults.ghostNext(1, 1_000); // the release's first copy reaches Redis 1 s late
    expect(await held?.release()).toBe(false);
    const again = await subject.acquire({ uuid, retry: { attempts: 1 } });
    expect(again).toBeDefined();
    await pause(1_300);
    expect(await direct.get(subject.key)).toBe(uuid);
    expect(await again?.release()).toBe(true);
  });

  it.each(["Lock", "Semaphore"])(
    "%s: the late extend leaves a newer same-uuid hold's lease alone",
    async (kind) => {
      const { passThrough, direct } = wire();
      const uuid = crypto.randomUUID();
      const { subject, held } = await lostHold(kind, "ghost-missed-extend", uuid);
      passThrough.faults.ghostNext(1, 1_000); // the extend's first copy reaches Redis 1 s late
      expect(await held?.extend(60_000)).toBe(false);
      const again = await subject.acquire({ uuid, retry: { attempts: 1 } });
      expect(again).toBeDefined();
      await pause(1_300);
      expect(await direct.pttl(subject.key)).toBeLessThanOrEqual(10_000);
      expect(await again?.release()).toBe(true);
    },
  );
});

describe("a release or extend whose first copy lands late, after it took effect and the same uuid holds again", () => {
  // Review helper-50 (2026-12-04). Misses (any expired holder's release) pushed a release that took effect
  // out of the receipt, so its late first copy deleted the newer hold: two holders. A permit's extend was
  // kept only on the permit's list, which its release moved away, so its late copy extended the newer hold.
  it.each(["Lock", "Semaphore"])(
    "%s: 32 misses between leave the release's receipt, and the newer hold",
    async (kind) => {
      const { passThrough, direct } = wire();
      const uuid = crypto.randomUUID();
      const id = uniqueId(`ghost-release-misses-${kind}`);
      const subject = subjectOf(
        kind,
        id,
        impatientClient(() => 10_000),
      );
      await (await subject.acquire({ uuid: crypto.randomUUID() }))?.release(); // the scripts are cached
      const held = await subject.acquire({ uuid });
      passThrough.faults.ghostNext(1, 1_500); // the release's first copy reaches Redis 1.5 s late
      expect(await held?.release()).toBe(true);
      const again = await subject.acquire({ uuid, retry: { attempts: 1 } });
      expect(again).toBeDefined();
      for (let miss = 0; miss < 32; miss++) {
        // Another process's release of a uuid that holds nothing (its lease ran out): a miss.
        const stranger = crypto.randomUUID();
        const released =
          kind === "Lock"
            ? new Lock({ id, redis: direct, uuid: stranger }).release()
            : new Semaphore({ id, redis: direct, limit: 1 }).permit(stranger).release();
        expect(await released).toBe(false);
      }
      await pause(1_800);
      expect(await direct.get(subject.key)).toBe(uuid);
      expect(await again?.release()).toBe(true);
    },
  );

  it.each(["Lock", "FairLock", "Semaphore"])(
    "%s: the late extend leaves the newer hold's lease alone",
    async (kind) => {
      const { passThrough, direct } = wire();
      const uuid = crypto.randomUUID();
      const subject = subjectOf(
        kind,
        uniqueId(`ghost-extend-rehold-${kind}`),
        impatientClient(() => 10_000),
      );
      const warm = await subject.acquire({ uuid: crypto.randomUUID() });
      await warm?.extend(1);
      await warm?.release(); // the scripts are cached
      const held = await subject.acquire({ uuid });
      passThrough.faults.ghostNext(1, 1_000); // the extend's first copy reaches Redis 1 s late
      expect(await held?.extend(60_000)).toBe(true);
      expect(await held?.release()).toBe(true);
      const again = await subject.acquire({ uuid, retry: { attempts: 1 } });
      expect(again).toBeDefined();
      await pause(1_300);
      expect(await direct.pttl(subject.key)).toBeLessThanOrEqual(10_000);
      expect(await again?.release()).toBe(true);
    },
  );
});
