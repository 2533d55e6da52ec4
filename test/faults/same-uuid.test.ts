// Re-acquiring with the same uuid after a try that timed out (issue 15, item 2): the late try is undone
// by its own receipt only, so the later grant, and a fair waiter's later place in line, stay.
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { clientFor, usePrivateStack } from "../faults/support/endpoints";
import { uniqueId } from "../support/redis";

const stack = usePrivateStack();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ["a lock, the same instance", Lock, false],
  ["a fair lock, the same instance", FairLock, false],
  ["a lock, another instance", Lock, true],
  ["a fair lock, another instance", FairLock, true],
])("%s re-acquired with the same uuid after a timed-out try", (_name, Kind, another) => {
  it("keeps the second grant: the first try's late clean-up does not delete it", async () => {
    const { endpoint, redis } = stack();
    const client = clientFor(endpoint);
    const id = uniqueId("same-uuid");
    const lock = new Kind({ id, redis: client, lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    const uuid = crypto.randomUUID();
    const again = another ? new Kind({ id, redis: client, lease: 5_000 }) : lock;
    redis.freeze();
    try {
      // No try got an answer: Redis did not answer, which is not contention.
      await expect(lock.acquire({ uuid, timeout: 100 })).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
      const second = again.acquire({ uuid, timeout: 3_000 });
      await pause(200);
      redis.thaw();
      expect(await second).toBe(true);
    } finally {
      redis.thaw();
    }
    await lock.pending;
    await pause(200);
    expect(await client.get(id)).toBe(uuid);
    const other = new Lock({ id, redis: client, retry: { attempts: 1 } });
    expect(await other.acquire()).toBe(false);
    expect(await again.release()).toBe(true);
  }, 20_000);
});

describe("a fair waiter re-queued with the same uuid after a timed-out try", () => {
  it("keeps its place: the first try's late leave-the-line does not remove it", async () => {
    const { endpoint, redis } = stack();
    const client = clientFor(endpoint);
    const id = uniqueId("same-uuid-queue");
    const holder = new FairLock({ id, redis: client, lease: 5_000 });
    expect(await holder.acquire()).toBe(true);
    const options = { id, redis: client, lease: 5_000, retry: { delay: 1_500, maxDelay: 1_500 } };
    const first = new FairLock(options);
    const waiter = new FairLock(options);
    const uuid = crypto.randomUUID();
    redis.freeze();
    let second: Promise<boolean>;
    try {
      await expect(first.acquire({ uuid, timeout: 100 })).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
      second = waiter.acquire({ uuid, timeout: 4_000 });
      await pause(200);
    } finally {
      redis.thaw();
    }
    await pause(400);
    const queue = companionKey(id, ":queue");
    expect(await client.zcard(queue)).toBe(1);
    expect(await holder.release()).toBe(true);
    expect(await second).toBe(true);
    await waiter.release();
  }, 20_000);
});

// Review helper-78 (2026-12-05): a second acquire of a uuid, started while the first was still acquiring,
// waited for the instance's turn, which the first's lease then kept: it failed as "held", its own token
// holding (3/3), while one started after succeeded at once.
describe.each([Lock, FairLock])("%o: two acquires of one uuid started together on one instance", (Kind) => {
  it("both hold: the second is the same holder once the first took the lock", async () => {
    const { endpoint } = stack();
    const lock = new Kind({ id: uniqueId("same-uuid-together"), redis: clientFor(endpoint), lease: 5_000 });
    const uuid = crypto.randomUUID();
    const first = lock.acquire({ uuid });
    const second = lock.acquire({ uuid, timeout: 1_000, retry: { delay: 50 } });
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await lock.release()).toBe(true);
  });
});
