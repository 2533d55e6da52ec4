import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();
// Nothing listens on port 1: every request fails at once.
const unreachable = new Redis({
  url: "http://127.0.0.1:1",
  token: "t",
  retry: false,
  enableTelemetry: false,
});

describe("await using", () => {
  it("releases at the end of the block (acquireOrThrow form)", async () => {
    const id = uniqueId("using-throw-form");
    {
      await using lock = await new Lock({ id, redis }).acquireOrThrow();
      expect(await lock.getStatus()).toBe("ACQUIRED");
      expect(await redis.exists(id)).toBe(1);
    }
    expect(await redis.exists(id)).toBe(0);
  });

  it("releases at the end of the block (boolean form)", async () => {
    const id = uniqueId("using-bool-form");
    {
      await using lock = new Lock({ id, redis });
      expect(await lock.acquire()).toBe(true);
      expect(await redis.exists(id)).toBe(1);
    }
    expect(await redis.exists(id)).toBe(0);
  });

  it("propagates the block's own error and still releases", async () => {
    const id = uniqueId("using-throws");
    const failure = new Error("critical section failed");
    const run = async () => {
      await using lock = await new Lock({ id, redis }).acquireOrThrow();
      expect(await lock.getStatus()).toBe("ACQUIRED");
      throw failure;
    };
    await expect(run()).rejects.toBe(failure);
    expect(await redis.exists(id)).toBe(0);
  });

  it("does nothing for a lock that was never acquired, already released, or taken by another owner", async () => {
    const id = uniqueId("using-noop");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    {
      await using loser = new Lock({ id, redis, retry: { attempts: 1 } });
      expect(await loser.acquire()).toBe(false);
    }
    expect(await holder.getStatus()).toBe("ACQUIRED");

    {
      await using released = new Lock({ id, redis, uuid: crypto.randomUUID() });
      expect(await released.release()).toBe(false);
    }
    expect(await holder.getStatus()).toBe("ACQUIRED");
    await holder.release();
  });

  it("does not let a failed acquisition escape as anything but LockAcquisitionError", async () => {
    const id = uniqueId("using-acquire-fails");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    const run = async () => {
      await using _lock = await new Lock({ id, redis, retry: { attempts: 1 } }).acquireOrThrow();
    };
    await expect(run()).rejects.toBeInstanceOf(LockAcquisitionError);
    expect(await holder.getStatus()).toBe("ACQUIRED");
    await holder.release();
  });

  it("never throws from disposal when Redis cannot be reached, so the block's error is the one seen", async () => {
    const failure = new Error("the block's own error");
    const run = async () => {
      await using _lock = new Lock({
        id: uniqueId("using-down"),
        redis: unreachable,
        uuid: "held-elsewhere",
      });
      throw failure;
    };
    await expect(run()).rejects.toBe(failure);
  });
});

describe("Symbol.asyncDispose", () => {
  it("called by hand on a Lock or on a Lease, releases that lease, and only once", async () => {
    const id = uniqueId("dispose-by-hand");
    const lock = new Lock({ id, redis });
    await lock.acquireOrThrow();
    await lock[Symbol.asyncDispose]();
    expect(await redis.exists(id)).toBe(0);
    expect(await lock.getStatus()).toBe("FREE");

    const other = new Lock({ id, redis });
    await lock.runExclusive(async (_signal, lease) => {
      await lease[Symbol.asyncDispose]();
      expect(await redis.exists(id)).toBe(0);
      await other.acquireOrThrow();
    });
    // runExclusive's own release, after the work, finds its lease ended: the next holder keeps the lock.
    expect(await other.getStatus()).toBe("ACQUIRED");
    await other.release();
  });
});
