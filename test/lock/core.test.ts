import { describe, expect, it } from "vitest";
import { type EvalClient, Lock, LockAcquisitionError } from "../../src/index";
import { waitUntil } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();
// Reads what the key really holds, without the client's JSON parsing of replies.
const rawRedis = newRedis({ automaticDeserialization: false });

/** The test's client, counting the scripts it sends: `requests()` so far. */
function countedClient(): { counted: EvalClient; requests: () => number } {
  let sent = 0;
  const counted: EvalClient = {
    eval: (script, keys, args) => {
      sent += 1;
      return redis.eval(script, keys, args);
    },
    evalsha: (sha1, keys, args) => {
      sent += 1;
      return redis.evalsha(sha1, keys, args);
    },
  };
  return { counted, requests: () => sent };
}

describe("acquire and release", () => {
  it("holds the key with a UUID token, excludes others, and releases only once", async () => {
    const id = uniqueId("basic");
    const lock = new Lock({ id, redis });
    const rival = new Lock({ id, redis, retry: { attempts: 1 } });

    expect(await lock.getStatus()).toBe("FREE");
    expect(await lock.acquire()).toBe(true);
    expect(await rawRedis.get(id)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await rival.acquire()).toBe(false);
    expect(await rival.getStatus()).toBe("FREE");
    expect(await rival.release()).toBe(false);

    expect(await lock.release()).toBe(true);
    expect(await redis.exists(id)).toBe(0);
    expect(await lock.getStatus()).toBe("FREE");
    expect(await lock.release()).toBe(false);
    expect(await rival.acquire()).toBe(true);
    expect(await rival.release()).toBe(true);
  });

  it("exposes the id", () => {
    expect(new Lock({ id: "the-id", redis }).id).toBe("the-id");
  });

  it("uses the default lease of 10 s, and a per-call lease for that call only", async () => {
    const id = uniqueId("lease-override");
    const lock = new Lock({ id, redis });
    expect(await lock.acquire({ lease: 60_000 })).toBe(true);
    expect(await redis.pttl(id)).toBeGreaterThan(30_000);
    await lock.release();

    expect(await lock.acquire()).toBe(true);
    const pttl = await redis.pttl(id);
    expect(pttl).toBeGreaterThan(5_000);
    expect(pttl).toBeLessThanOrEqual(10_000);
    await lock.release();
  });

  it("keeps the lease it holds when a later acquire fails, which waits here and sends nothing", async () => {
    const id = uniqueId("keep-token");
    const { counted, requests } = countedClient();
    const lock = new Lock({ id, redis: counted, retry: { attempts: 1 } });
    expect(await lock.acquire()).toBe(true);
    // One instance holds one lease at a time: a second acquire waits for the first to end, here,
    // without a request; it does not end in time, so the acquire fails as "held".
    const before = requests();
    expect(await lock.acquire()).toBe(false);
    await expect(lock.acquireOrThrow()).rejects.toMatchObject({ reason: "held", attempts: 1 });
    // The message says whose hold it waited for: nothing was asked of Redis.
    await expect(lock.acquireOrThrow()).rejects.toThrow(/another caller of this instance held it/);
    // And that its one attempt was that wait, not a try Redis refused.
    await expect(lock.acquireOrThrow()).rejects.toThrow(
      /after 1 attempt \(a wait here, nothing sent to Redis\) in/,
    );
    expect(requests()).toBe(before);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await lock.extend(1_000)).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  it("counts a caller's waits for the turn apart from its tries sent to Redis in the message", async () => {
    const id = uniqueId("waits-and-tries");
    const { counted, requests } = countedClient();
    const holder = new Lock({ id, redis });
    expect(await holder.acquire()).toBe(true);
    // The first caller has the instance's turn and sends all its 3 tries; the second waits for the turn at
    // first, then (once the first gave up) tries Redis itself: how many of each depends on timing.
    const lock = new Lock({ id, redis: counted });
    const first = lock.acquireOrThrow({ retry: { attempts: 3, delay: 300 } });
    const second = lock.acquireOrThrow({ retry: { attempts: 8, delay: 150 } });
    await expect(first).rejects.toMatchObject({ attempts: 3, message: expect.not.stringContaining(" here") });
    const error = await second.then(
      () => expect.unreachable("the holder kept the lock"),
      (thrown: unknown) => thrown as LockAcquisitionError,
    );
    expect(error.attempts).toBe(8);
    const split =
      /after 8 attempts \((?:(\d+) sent to Redis, (\d+) waits? here|each a wait here, nothing sent to Redis)\) in/.exec(
        error.message,
      );
    expect(split, error.message).not.toBeNull();
    // What it says it sent is what reached Redis, beside the first caller's 3 tries.
    expect(Number(split?.[1] ?? 0)).toBe(requests() - 3);
    expect(Number(split?.[1] ?? 0) + Number(split?.[2] ?? 8)).toBe(8);
    await holder.release();
  });

  it("a failed wait for this token's own release in flight names no other caller", async () => {
    const id = uniqueId("own-release");
    let stall: Promise<void> | undefined; // the next request waits for it
    const delayed = async <T>(send: () => Promise<T>) => {
      const wait = stall;
      stall = undefined;
      await wait;
      return send();
    };
    const slow: EvalClient = {
      eval: (script, keys, args) => delayed(() => redis.eval(script, keys, args)),
      evalsha: (sha1, keys, args) => delayed(() => redis.evalsha(sha1, keys, args)),
    };
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: slow, retry: { attempts: 1 } });
    await lock.acquireOrThrow({ uuid });
    let letGo!: () => void;
    stall = new Promise((resolve) => {
      letGo = resolve;
    });
    const released = lock.release();
    // The same token waits for its release to land (a try before it would be deleted by it): its one attempt.
    const failed = lock.acquireOrThrow({ uuid }).catch((error: unknown) => error);
    letGo();
    expect(await released).toBe(true);
    const error = await failed;
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect(error).toMatchObject({ reason: "held", attempts: 1 });
    expect((error as Error).message).not.toMatch(/another caller/);
  });

  // 0.2's use: acquire, never release, let the lease run out. The instance's turn ends with the lease.
  it("acquires again once a lease left unreleased has run out, as 0.2 did", async () => {
    const id = uniqueId("left-to-expire");
    const lock = new Lock({ id, redis, lease: 1_000 });
    expect(await lock.acquire()).toBe(true);
    const first = await rawRedis.get(id);
    await waitUntil(async () => (await redis.exists(id)) === 0 && lock.remainingMs === 0, `${id} to expire`);
    expect(await lock.acquire()).toBe(true);
    const second = await rawRedis.get(id);
    expect(second).toEqual(expect.any(String));
    expect(second).not.toBe(first);
    expect(await lock.release()).toBe(true);
  });

  // The second review found the first fix's gap: a wait that began while the first acquire was in flight.
  it.each([
    ["the first acquired", true],
    ["the first acquire in flight", false],
  ])(
    "a second acquire waiting for the turn (%s) takes the lock when the first lease runs out unreleased",
    async (_when, settled) => {
      const id = uniqueId("turn-runs-out");
      const lock = new Lock({ id, redis, lease: 1_000 });
      const holding = lock.acquire();
      if (settled) await holding;
      // Its schedule would wait 5 s, past its timeout: the wait ends with the first lease's deadline.
      const waiting = lock.acquire({ timeout: 4_000, retry: { delay: 5_000 } });
      expect(await holding).toBe(true);
      const first = await rawRedis.get(id);
      expect(await waiting).toBe(true);
      expect(await rawRedis.get(id)).not.toBe(first);
      expect(await lock.release()).toBe(true);
    },
  );

  it("acquireOrThrow resolves with the lock: the instance in all but its disposal", async () => {
    const id = uniqueId("or-throw");
    const lock = new Lock({ id, redis });
    const held = await lock.acquireOrThrow();
    expect(held).toBeInstanceOf(Lock);
    expect([held.id, held.signal, held.remainingMs > 0]).toEqual([id, lock.signal, true]);
    expect(await held.getStatus()).toBe("ACQUIRED");
    expect(await held.release()).toBe(true); // the instance's release: its lease
    expect(await lock.getStatus()).toBe("FREE");
  });

  it("acquireOrThrow fails with LockAcquisitionError carrying id, attempts and time, never the token", async () => {
    const id = uniqueId("or-throw-fail");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    const secret = `secret-${crypto.randomUUID()}`;
    const loser = new Lock({ id, redis, retry: { attempts: 2, delay: 20 } });

    const error = await loser.acquireOrThrow({ uuid: secret }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockAcquisitionError);
    const failure = error as LockAcquisitionError;
    expect(failure.name).toBe("LockAcquisitionError");
    expect(failure.code).toBe("LOCK_NOT_ACQUIRED");
    expect(failure.lockId).toBe(id);
    expect(failure.attempts).toBe(2);
    expect(failure.reason).toBe("held");
    expect(failure.elapsedMs).toBeGreaterThan(0);
    expect(failure.message).toContain(id);
    const everything = `${failure.message} ${failure.stack} ${JSON.stringify(failure)}`;
    expect(everything).not.toContain(secret);
    await holder.release();
  });
});

describe("tokens are compared in Lua, so JSON-looking tokens work", () => {
  // @upstash/redis JSON-parses replies: "123" would come back as the number 123.
  it.each(["123", "true", "null", '"quoted"', '{"a":1}', "-5"])("seeded uuid %s", async (uuid) => {
    const id = uniqueId("json-token");
    const lock = new Lock({ id, redis });
    expect(await lock.acquire({ uuid })).toBe(true);
    expect(await rawRedis.get(id)).toBe(uuid);
    // Re-sending the same token, as a client retry would, still counts as acquired.
    expect(await lock.acquire({ uuid })).toBe(true);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await lock.extend(1_000)).toBe(true);

    const seeded = new Lock({ id, redis, uuid });
    expect(await seeded.getStatus()).toBe("ACQUIRED");
    expect(await seeded.extend(1_000)).toBe(true);
    expect(await seeded.release()).toBe(true);
    expect(await lock.getStatus()).toBe("FREE");
    expect(await redis.exists(id)).toBe(0);
  });
});

describe("seeded uuid", () => {
  it("acts on a lock acquired by another instance without acquiring", async () => {
    const id = uniqueId("seeded");
    const uuid = crypto.randomUUID();
    const owner = new Lock({ id, redis });
    await owner.acquire({ uuid, lease: 5_000 });

    const finalizer = new Lock({ id, redis, uuid });
    expect(await finalizer.getStatus()).toBe("ACQUIRED");
    expect(await finalizer.extend(5_000)).toBe(true);
    expect(await redis.pttl(id)).toBeGreaterThan(6_000);
    expect(await finalizer.release()).toBe(true);
    expect(await owner.getStatus()).toBe("FREE");
  });

  it("a stale finalizer cannot release a lock that moved on", async () => {
    const id = uniqueId("stale");
    const stale = new Lock({ id, redis, uuid: crypto.randomUUID() });
    const current = new Lock({ id, redis });
    await current.acquire();
    expect(await stale.release()).toBe(false);
    expect(await stale.extend(1_000)).toBe(false);
    expect(await stale.getStatus()).toBe("FREE");
    expect(await current.getStatus()).toBe("ACQUIRED");
    await current.release();
  });
});

describe("contention within one process", () => {
  it("20 instances acquiring one id at once: exactly one wins", async () => {
    const id = uniqueId("twenty");
    const locks = Array.from({ length: 20 }, () => new Lock({ id, redis, retry: { attempts: 1 } }));
    const results = await Promise.all(locks.map((lock) => lock.acquire()));
    expect(results.filter(Boolean)).toHaveLength(1);
    const statuses = await Promise.all(locks.map((lock) => lock.getStatus()));
    expect(statuses.filter((status) => status === "ACQUIRED")).toHaveLength(1);
    await locks[results.indexOf(true)]?.release();
  });
});

describe("Redis errors", () => {
  it("a key of another type surfaces as LockRedisError, not as contention", async () => {
    const id = uniqueId("wrongtype");
    await redis.hset(id, { field: "value" });
    const lock = new Lock({ id, redis, retry: { attempts: 1 } });
    const error = await lock.acquire().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "LockRedisError", code: "LOCK_REDIS_ERROR", operation: "acquire" });
    expect(String((error as Error).message)).toMatch(/WRONGTYPE/);
    expect((error as Error).cause).toBeInstanceOf(Error);
    await redis.del(id);
  });

  it.each(["extend", "getStatus"] as const)(
    "the key turned into another type under a holder: %s() fails refused, and the lease is lost as taken",
    async (read) => {
      // Review helper-120 (3/3): a renewal read WRONGTYPE as "taken" at once; these two threw and left the
      // lease active until it ran out, then "expired".
      const id = uniqueId(`wrongtype-${read}`);
      const lost: string[] = [];
      const lock = new Lock({ id, redis, lease: 5_000, onLost: (error) => lost.push(error.reason) });
      expect(await lock.acquire()).toBe(true);
      await redis.del(id);
      await redis.hset(id, { field: "value" });
      const error = await (read === "extend" ? lock.extend(1_000) : lock.getStatus()).catch(
        (caught) => caught,
      );
      await redis.del(id);
      expect({
        refused: error.refused,
        lost,
        aborted: lock.signal.aborted,
        remaining: lock.remainingMs,
      }).toEqual({
        refused: true,
        lost: ["taken"],
        aborted: true,
        remaining: 0,
      });
    },
  );
});

describe("prefix", () => {
  it("puts the key at prefix + id; different prefixes are different locks", async () => {
    const id = uniqueId("prefixed");
    const a = new Lock({ id, redis, prefix: "tenant-a:", retry: { attempts: 1 } });
    const b = new Lock({ id, redis, prefix: "tenant-b:", retry: { attempts: 1 } });
    const plain = new Lock({ id, redis, retry: { attempts: 1 } });
    expect(a.id).toBe(id);
    expect(await a.acquire()).toBe(true);
    expect(await redis.exists(`tenant-a:${id}`)).toBe(1);
    expect(await redis.exists(id)).toBe(0);
    expect(await b.acquire()).toBe(true);
    expect(await plain.acquire()).toBe(true);
    expect(await new Lock({ id, redis, prefix: "tenant-a:", retry: { attempts: 1 } }).acquire()).toBe(false);
    await Promise.all([a.release(), b.release(), plain.release()]);
    expect(await redis.exists(`tenant-a:${id}`, `tenant-b:${id}`, id)).toBe(0);
  });
});
