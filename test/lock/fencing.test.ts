import { describe, expect, it } from "vitest";
import { hashSlot } from "../../src/hash-slot";
import { Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();

/** The fencing counter of the lock on `key`, beside it in its hash slot. */
const fenceKey = (key: string) => companionKey(key, ":fence");

describe("fencing tokens", () => {
  it("each acquisition gets a larger token, from any instance; none without fencing", async () => {
    const id = uniqueId("fence");
    const first = new Lock({ id, redis, fencing: true });
    const second = new Lock({ id, redis });
    expect(first.fencingToken).toBeUndefined();

    const tokens: number[] = [];
    for (let round = 0; round < 5; round++) {
      await first.acquireOrThrow();
      tokens.push(first.fencingToken as number);
      await first.release();
      expect(first.fencingToken).toBeUndefined();
      await second.acquireOrThrow({ fencing: true });
      tokens.push(second.fencingToken as number);
      await second.release();
    }
    for (const [index, token] of tokens.entries()) {
      expect(Number.isSafeInteger(token)).toBe(true);
      if (index > 0) expect(token).toBeGreaterThan(tokens[index - 1] as number);
    }

    await second.acquireOrThrow();
    expect(second.fencingToken).toBeUndefined();
    await second.release();
  });

  it("on Upstash, counts from 1 in a counter that never expires, in the lock's hash slot: no clock read", async () => {
    const id = uniqueId("fence-key");
    const lock = new Lock({ id, redis, fencing: true, lease: 2_000 });
    const tokens: number[] = [];
    for (let round = 0; round < 3; round++) {
      await lock.acquireOrThrow();
      tokens.push(lock.fencingToken as number);
      await lock.release();
    }
    expect(tokens).toEqual([1, 2, 3]);
    const counter = fenceKey(id);
    expect(hashSlot(counter)).toBe(hashSlot(id));
    expect(Number(await redis.get(counter))).toBe(3);
    expect(await redis.pttl(counter)).toBe(-1);
    await redis.del(counter);
  });

  it("with the clock floor: tokens never below Redis's clock in µs, counter with a bounded lifetime", async () => {
    const id = uniqueId("fence-clock");
    const lock = new Lock({ id, redis, fencing: { clockFloor: true }, lease: 2_000 });
    await lock.acquireOrThrow();
    expect(Math.abs((lock.fencingToken as number) / 1_000 - Date.now())).toBeLessThan(60_000);
    const counter = fenceKey(id);
    expect(Number(await redis.get(counter))).toBe(lock.fencingToken);
    const pttl = await redis.pttl(counter);
    expect(pttl).toBeGreaterThan(60 * 60 * 1000 - 60_000);
    expect(pttl).toBeLessThanOrEqual(60 * 60 * 1000 + 2_000);
    await lock.release();
  });

  it("tokens keep increasing when the clock floor is turned off after use, and back on", async () => {
    const id = uniqueId("fence-switch");
    const clock = new Lock({ id, redis, fencing: { clockFloor: true } });
    const counter = new Lock({ id, redis, fencing: true });
    const tokens: number[] = [];
    for (const lock of [clock, counter, counter, clock, counter]) {
      await lock.acquireOrThrow();
      tokens.push(lock.fencingToken as number);
      await lock.release();
    }
    for (const [index, token] of tokens.entries()) {
      if (index > 0) expect(token).toBeGreaterThan(tokens[index - 1] as number);
    }
    // The counter-only acquire keeps the counter from then on.
    expect(await redis.pttl(fenceKey(id))).toBe(-1);
    await redis.del(fenceKey(id));
  });

  it("with the clock floor, never goes backwards when the counter key is gone: tokens follow Redis's clock", async () => {
    const id = uniqueId("fence-lost");
    const lock = new Lock({ id, redis, fencing: { clockFloor: true } });
    await lock.acquireOrThrow();
    const before = lock.fencingToken as number;
    await lock.release();
    await redis.del(fenceKey(id));
    await lock.acquireOrThrow();
    expect(lock.fencingToken).toBeGreaterThan(before);
    await lock.release();
  });

  it("a resource that checks the token refuses a paused old holder's late write", async () => {
    const { FencedStore, writeUnderLock } = await import("../../examples/fencing");
    const id = uniqueId("fenced-store");
    const store = new FencedStore();
    const old = new Lock({ id, redis, lease: 600, fencing: true });
    await old.acquireOrThrow();
    const oldToken = old.fencingToken as number;

    // The old holder pauses past its lease; a new holder takes the lock and writes.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const current = new Lock({ id, redis, fencing: true });
    expect(await writeUnderLock(current, store, "report", "new")).toBe(true);
    expect(current.fencingToken).toBeUndefined();

    // The old holder wakes up and writes with its stale token: refused.
    expect(store.write("report", "stale", oldToken)).toBe(false);
    expect(store.read("report")).toBe("new");
  });
});

// Review helper-61 (2026-12-04): a clock-floor acquisition gave the counter that counted fencing had made
// permanent an expiry (lease + 1 h); once it expired, the next counted acquisition issued 1 (4/4).
describe("processes that fence the same id counted and with a clock floor", () => {
  it.each([
    ["Lock", (id: string, fencing: object) => new Lock({ id, redis: newRedis(), fencing })],
    [
      "Semaphore",
      (id: string, fencing: object) => new Semaphore({ id, redis: newRedis(), limit: 2, fencing }),
    ],
  ])("%s: the counter stays permanent, and tokens keep increasing", async (_name, make) => {
    const id = uniqueId("fence-switch");
    const fence = companionKey(id, ":fence");
    const tokens: number[] = [];
    for (const clockFloor of [false, true, false]) {
      const lease = await make(id, { clockFloor }).acquireOrThrow();
      tokens.push(lease.fencingToken as number);
      await lease.release();
      expect(await newRedis().pttl(fence)).toBe(-1);
    }
    expect(tokens[1]).toBeGreaterThan(tokens[0] as number);
    expect(tokens[2]).toBeGreaterThan(tokens[1] as number);
  });
});
