import { Lock as LockV02 } from "@upstash/lock-0.2.1";
import { describe, expect, it, vi } from "vitest";
import { Lock } from "../../src/index";
import { within } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";

// The published 0.2.1, installed under an npm alias, on the same Redis as this version.
const redis = newRedis();
const rawRedis = newRedis({ automaticDeserialization: false });

describe("0.2.1 and 0.3 on the same key", () => {
  it("a 0.2.1 holder blocks a 0.3 acquire", async () => {
    const id = uniqueId("compat-old-holds");
    const old = new LockV02({ id, redis, retry: { attempts: 1, delay: 10 } });
    expect(await old.acquire()).toBe(true);
    const current = new Lock({ id, redis, retry: { attempts: 1 } });
    expect(await current.acquire()).toBe(false);
    expect(await old.release()).toBe(true);
    expect(await current.acquire()).toBe(true);
    await current.release();
  });

  it("a 0.3 holder blocks a 0.2.1 acquire, and 0.2.1 sees the same key and value layout", async () => {
    const id = uniqueId("compat-new-holds");
    const uuid = crypto.randomUUID();
    const current = new Lock({ id, redis });
    expect(await current.acquire({ uuid })).toBe(true);
    expect(await rawRedis.get(id)).toBe(uuid);
    const old = new LockV02({ id, redis, retry: { attempts: 1, delay: 10 } });
    expect(await old.acquire()).toBe(false);
    expect(await current.release()).toBe(true);
    expect(await old.acquire()).toBe(true);
    expect(await old.release()).toBe(true);
  });

  it("a 0.3 Lock seeded with a 0.2.1 holder's uuid reads, extends and releases it", async () => {
    const id = uniqueId("compat-seeded");
    const uuid = crypto.randomUUID();
    const old = new LockV02({ id, redis, lease: 5_000 });
    expect(await old.acquire({ uuid })).toBe(true);

    const current = new Lock({ id, redis, uuid });
    expect(await current.getStatus()).toBe("ACQUIRED");
    expect(await current.extend(1_500)).toBe(true);
    expect(await current.release()).toBe(true);
    expect(await redis.exists(id)).toBe(0);
    expect(await old.getStatus()).toBe("FREE");
  });
});

describe("every input 0.2.1 accepted keeps working", () => {
  /** Another owner holds `id` until released. */
  async function heldElsewhere(id: string): Promise<Lock> {
    const holder = new Lock({ id, redis, lease: 30_000 });
    await holder.acquireOrThrow();
    return holder;
  }

  it("retry.delay: 0 retries without sleeping, as 0.2.1 does", async () => {
    const id = uniqueId("compat-delay-0");
    const holder = await heldElsewhere(id);
    const ours = new Lock({ id, redis, retry: { attempts: 5, delay: 0 } });
    const old = new LockV02({ id, redis, retry: { attempts: 5, delay: 0 } });
    // A wait between tries is a timer: with delay 0, none may be armed for a measurable time (the
    // client's own timers are of seconds). Counted rather than timed, so a slow machine cannot fail it.
    const waits = vi.spyOn(globalThis, "setTimeout");
    try {
      expect(await ours.acquire()).toBe(false);
      expect(await old.acquire()).toBe(false);
      const sleeps = waits.mock.calls.filter(([, ms]) => typeof ms === "number" && ms >= 1 && ms < 1_000);
      expect(sleeps).toEqual([]);
    } finally {
      waits.mockRestore();
    }
    const error = await ours.acquireOrThrow().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ attempts: 5 });
    await holder.release();
  });

  it("acquire({ uuid: '' }) draws a fresh token, as 0.2.1's `if (uuid)` does", async () => {
    const id = uniqueId("compat-empty-uuid");
    const ours = new Lock({ id, redis });
    expect(await ours.acquire({ uuid: "" })).toBe(true);
    const value = await rawRedis.get<string>(id);
    expect(value).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ours.release()).toBe(true);
    const old = new LockV02({ id, redis });
    expect(await old.acquire({ uuid: "" })).toBe(true);
    expect(await rawRedis.get<string>(id)).toMatch(/^[0-9a-f-]{36}$/);
    expect(await old.release()).toBe(true);
  });

  it("a fractional attempts count makes as many tries as 0.2.1 (it rounds up)", async () => {
    const id = uniqueId("compat-fraction");
    const holder = await heldElsewhere(id);
    const error = await new Lock({ id, redis, retry: { attempts: 2.5, delay: 1 } })
      .acquireOrThrow()
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ attempts: 3 });
    await holder.release();
  });

  it("attempts: Infinity waits until the lock is free, as 0.2.1 does", async () => {
    const id = uniqueId("compat-infinity");
    const holder = await heldElsewhere(id);
    setTimeout(() => void holder.release(), 300);
    const ours = new Lock({ id, redis, retry: { attempts: Number.POSITIVE_INFINITY, delay: 20 } });
    expect(await within(ours.acquire(), 5_000, "the unbounded acquire")).toBe(true);
    await ours.release();
  });

  it("extend(0) tells whether the lock is held and changes nothing, as 0.2.1 does", async () => {
    const id = uniqueId("compat-extend-0");
    const ours = new Lock({ id, redis, lease: 5_000 });
    expect(await ours.acquire()).toBe(true);
    const before = await redis.pttl(id);
    expect(await ours.extend(0)).toBe(true);
    const after = await redis.pttl(id);
    expect(after).toBeLessThanOrEqual(before);
    expect(after).toBeGreaterThan(before - 1_000);
    expect(await ours.release()).toBe(true);
    expect(await ours.extend(0)).toBe(false);
    const old = new LockV02({ id, redis, lease: 5_000 });
    expect(await old.acquire()).toBe(true);
    expect(await old.extend(0)).toBe(true);
    await old.release();
  });

  it("an empty id is a key like any other, as in 0.2.1", async () => {
    // The empty key is shared by every caller that passes "": take it only briefly.
    const ours = new Lock({ id: "", redis, lease: 2_000, retry: { attempts: 20, delay: 50 } });
    expect(await ours.acquire()).toBe(true);
    expect(await ours.getStatus()).toBe("ACQUIRED");
    expect(await ours.extend(100)).toBe(true);
    expect(await ours.release()).toBe(true);
  });

  // 0.2.1 read every option with `??`: null meant "the default", as undefined does.
  it("null options and acquire(null) mean the defaults, as in 0.2.1", async () => {
    const id = uniqueId("compat-null");
    const loose = null as never;
    const lock = new Lock({ id, redis, lease: loose, retry: loose });
    expect(await lock.acquire(loose)).toBe(true);
    expect(await redis.pttl(id)).toBeGreaterThan(9_000); // the default lease, 10 s
    expect(await lock.release()).toBe(true);
    const holder = await heldElsewhere(id);
    const counted = new Lock({ id, redis, retry: { attempts: loose, delay: loose } });
    const started = performance.now();
    expect(await counted.acquire({ lease: loose, retry: loose, timeout: loose, signal: loose })).toBe(false);
    // Three tries 100 ms apart, the defaults: at least the two waits between them.
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await holder.release();
  });

  it("a seeded uuid that is empty means no seed", async () => {
    const id = uniqueId("compat-seed-empty");
    const lock = new Lock({ id, redis, uuid: "" });
    expect(await lock.getStatus()).toBe("FREE");
    expect(await lock.release()).toBe(false);
  });
});
