// Review helper-126 (stop 49, 10/10 over ioredis and @upstash/redis, no fault injected): runExclusive and
// acquireOrThrow took the instance's lease as it was after their acquisition resumed. Same-uuid callers skip
// the turn, so a later one's lease had often replaced it: three runs of the held uuid all got the newest
// lease, the first run's release ended the hold under the other two, whose signal (a released lease's,
// never aborted) stayed live while another owner took the lock.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type Lease, Lock, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const clients: Record<"ioredis" | "upstash", () => RedisClient> = {
  ioredis: () => {
    const client = new IoRedis(inject("redisUrl"));
    opened.push(client);
    return client;
  },
  upstash: () => clientFor(sharedEndpoint()),
};

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  it("runs of the held uuid each get their own lease, and none works on once the hold is gone", async () => {
    const id = uniqueId("same-uuid-runs");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: clients[name](), lease: 5_000 });
    expect(await lock.acquire({ uuid })).toBe(true); // the instance holds the uuid: the runs skip the turn
    const leases: Lease[] = [];
    const liveWithoutHold: number[] = [];
    let holdGone = false;
    const runs = [0, 1, 2].map((run) =>
      lock.runExclusive(
        async (signal, lease) => {
          leases.push(lease);
          await pause(run === 0 ? 100 : 600); // the first run ends first, and releases
          if (holdGone && !signal.aborted) liveWithoutHold.push(run);
        },
        { uuid },
      ),
    );
    await runs[0];
    const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
    holdGone = await outsider.acquire({ retry: { attempts: 1 } });
    await Promise.all(runs);
    if (holdGone) await outsider.release();
    expect({ leases: new Set(leases).size, liveWithoutHold }).toEqual({ leases: 3, liveWithoutHold: [] });
  });

  it("disposing an older acquireOrThrow of a uuid leaves the hold a newer one took over", async () => {
    // Review helper-126 (suspect, 3/3): the older disposal released the one hold through the instance while
    // the newer caller's signal stayed live, and another owner took the lock. A re-acquire with plain
    // acquire() in the block is still the block's to end (test/faults/reacquire-dispose.test.ts).
    const id = uniqueId("same-uuid-dispose");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const older = await lock.acquireOrThrow({ uuid });
    const newer = await lock.acquireOrThrow({ uuid });
    await older[Symbol.asyncDispose]();
    const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const whileNewerHolds = await outsider.acquire({ retry: { attempts: 1 } });
    const newerLive = !newer.signal.aborted;
    await newer[Symbol.asyncDispose]();
    const afterNewer = await outsider.acquire({ retry: { attempts: 1 } });
    await outsider.release();
    expect({ whileNewerHolds, newerLive, afterNewer }).toEqual({
      whileNewerHolds: false,
      newerLive: true,
      afterNewer: true,
    });
  });

  it.each([false, true])(
    "a block's plain re-acquire while a same-uuid runExclusive runs ends at the block's end (run first: %s)",
    async (runEndsFirst) => {
      // Review helper-127 (stop 49, 12/12): with the disposal decided by the newest caller-ended acquisition
      // (1ea7c5e), the run's release sent nothing (its lease was handed on to the re-acquire's) and the
      // block's disposal released only its own retired lease: the lock stayed held for nobody, for good with
      // autoExtend.
      const id = uniqueId("same-uuid-reacquire-run");
      const uuid = crypto.randomUUID();
      const lock = new Lock({ id, redis: clients[name](), lease: 3_000 });
      let ran!: Promise<void>;
      {
        await using held = await lock.acquireOrThrow({ uuid });
        ran = lock.runExclusive(() => pause(runEndsFirst ? 50 : 300), { uuid }); // takes the hold over
        await pause(20);
        expect(await held.acquire({ uuid, autoExtend: true })).toBe(true); // the block's to end
        if (runEndsFirst) await ran;
      }
      await ran;
      const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const outsiderGot = await outsider.acquire({ retry: { attempts: 1 } });
      if (outsiderGot) await outsider.release();
      const stillHeld = lock.remainingMs > 0;
      await lock.release().catch(() => false);
      expect({ outsiderGot, stillHeld }).toEqual({ outsiderGot: true, stillHeld: false });
    },
  );

  it("an older block's end leaves the hold a newer block re-acquired for itself", async () => {
    // Review helper-128 (stop 49, 12/12): deciding by the current lease alone, the older acquireOrThrow's
    // disposal released the plain re-acquire the newer block made, whose signal stayed live while another
    // owner took the lock. The hold now ends with the last caller sharing it.
    const id = uniqueId("same-uuid-newer-reacquire");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const older = await lock.acquireOrThrow({ uuid });
    let olderEnded!: () => void;
    const olderGone = new Promise<void>((resolve) => {
      olderEnded = resolve;
    });
    const newerBlock = (async () => {
      await using newer = await lock.acquireOrThrow({ uuid });
      const reacquired = await newer.acquire({ uuid }); // this block's own re-acquire
      const signal = newer.signal;
      await olderGone;
      const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const outsiderGot = await outsider.acquire({ retry: { attempts: 1 } });
      if (outsiderGot) await outsider.release();
      return { reacquired, outsiderGot, live: !signal.aborted };
    })();
    await pause(50);
    await older[Symbol.asyncDispose]();
    olderEnded();
    const whileNewer = await newerBlock;
    const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const afterBoth = await outsider.acquire({ retry: { attempts: 1 } });
    if (afterBoth) await outsider.release();
    expect({ whileNewer, afterBoth }).toEqual({
      whileNewer: { reacquired: true, outsiderGot: false, live: true },
      afterBoth: true,
    });
  });

  // Review helper-129 (stop 49): the newest scope's end released the hold while earlier callers sharing it
  // were in their scopes (20/20), and a scope disposed twice counted as two ends (10/10).
  it("nested scopes of a uuid: the inner one's end leaves the hold to the outer", async () => {
    const id = uniqueId("same-uuid-nested");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
    let whileOuter: { outsiderGot: boolean; live: boolean } | undefined;
    {
      await using outer = await lock.acquireOrThrow({ uuid });
      {
        await using _inner = await lock.acquireOrThrow({ uuid });
      }
      const outsiderGot = await outsider.acquire({ retry: { attempts: 1 } });
      if (outsiderGot) await outsider.release();
      whileOuter = { outsiderGot, live: !outer.signal.aborted };
    }
    const afterBoth = await outsider.acquire({ retry: { attempts: 1 } });
    if (afterBoth) await outsider.release();
    expect({ whileOuter, afterBoth }).toEqual({
      whileOuter: { outsiderGot: false, live: true },
      afterBoth: true,
    });
  });

  it.each([1, 2])(
    "a scope disposed %i time(s) while a runExclusive of its uuid works leaves it the hold",
    async (times) => {
      const id = uniqueId("same-uuid-dispose-twice");
      const uuid = crypto.randomUUID();
      const lock = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const scope = await lock.acquireOrThrow({ uuid });
      let finish!: () => void;
      let working!: () => void;
      const started = new Promise<void>((resolve) => {
        working = resolve;
      });
      const run = lock.runExclusive(
        (signal) =>
          new Promise<boolean>((resolve) => {
            finish = () => resolve(signal.aborted);
            working();
          }),
        { uuid },
      );
      await started;
      for (let call = 0; call < times; call++) await scope[Symbol.asyncDispose]();
      const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const outsiderGot = await outsider.acquire({ retry: { attempts: 1 } });
      if (outsiderGot) await outsider.release();
      finish();
      expect({ outsiderGot, abortedUnderWork: await run }).toEqual({
        outsiderGot: false,
        abortedUnderWork: false,
      });
    },
  );

  it.each(["never disposed", "disposed late"] as const)(
    "a scope whose lease expired (%s) does not keep a later hold of its uuid past that hold's scope",
    async (mode) => {
      // Review helper-130 (stop 49, 12/12): the expired lease still handed its caller's share on to a fresh
      // hold of its uuid, which then outlived its own scope, for good with autoExtend.
      const id = uniqueId("same-uuid-expired-share");
      const uuid = crypto.randomUUID();
      const lock = new Lock({ id, redis: clients[name](), lease: 600 });
      const stale = await lock.acquireOrThrow({ uuid });
      await pause(900); // its lease is over, here and in Redis
      {
        await using _fresh = await lock.acquireOrThrow({ uuid, autoExtend: true });
      }
      const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const freeAfterScope = await outsider.acquire({ retry: { attempts: 1 } });
      if (freeAfterScope) await outsider.release();
      if (mode === "disposed late") await stale[Symbol.asyncDispose]();
      await lock.release();
      expect(freeAfterScope).toBe(true);
    },
  );

  // Review helper-131 (stop 49, by reading, on the version before): a plain re-acquire or a seed made in a
  // scope whose lease had run out took no share from it, so the scope's end released nothing, for good
  // with autoExtend; and a scope's end went through the instance, whose seed released any hold of the uuid.
  it("a plain re-acquire made in a scope after its lease ran out ends with the scope", async () => {
    const id = uniqueId("same-uuid-reacquire-expired");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: clients[name](), lease: 600 });
    {
      await using held = await lock.acquireOrThrow({ uuid });
      await pause(900); // its lease ran out, here and in Redis
      expect(await held.acquire({ uuid, autoExtend: true })).toBe(true);
    }
    const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
    const freeAfterScope = await outsider.acquire({ retry: { attempts: 1 } });
    if (freeAfterScope) await outsider.release();
    await lock.release();
    expect(freeAfterScope).toBe(true);
  });

  // Review helper-132 (stop 49, by reading 129bd1e): a seed a status check built took the run's share, and
  // the run's end released it, a release that names no hold: it deleted the hold taken elsewhere since.
  it.each([false, true])(
    "a run whose lease ran out ends only its own hold, not a fresh one of its uuid elsewhere (a status check between: %s)",
    async (statusCheck) => {
      const id = uniqueId("same-uuid-run-expired");
      const uuid = crypto.randomUUID();
      const here = new Lock({ id, redis: clients[name](), lease: 600 });
      const elsewhere = new Lock({ id, redis: clients[name](), lease: 5_000 });
      let finish!: () => void;
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const run = here.runExclusive(
        () =>
          new Promise<void>((resolve) => {
            finish = resolve;
            started();
          }),
        { uuid },
      );
      await running;
      // The run's lease ran out in Redis, so here too (its deadline here is no later than Redis's): not
      // assumed after a fixed 900 ms from the call, which a slow try beside other tests outlasted.
      const look = clients.ioredis() as IoRedis;
      await waitUntil(async () => (await look.pttl(id)) === -2, "the run's key expired");
      if (statusCheck) expect(await here.getStatus()).toBe("FREE"); // builds a seed of the uuid
      const heldElsewhere = await elsewhere.acquire({ uuid }); // a fresh hold of the uuid
      finish();
      await run;
      const outsider = new Lock({ id, redis: clients[name](), lease: 5_000 });
      const outsiderGot = await outsider.acquire({ retry: { attempts: 1 } });
      if (outsiderGot) await outsider.release();
      const status = await elsewhere.getStatus();
      await elsewhere.release();
      expect({ heldElsewhere, outsiderGot, status }).toEqual({
        heldElsewhere: true,
        outsiderGot: false,
        status: "ACQUIRED",
      });
    },
  );
});
