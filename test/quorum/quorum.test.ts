import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FairLock,
  InstanceTimeoutError,
  Lock,
  LockAcquisitionError,
  LockRedisError,
  quorum,
  Semaphore,
} from "../../src/index";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { pause, waitUntil } from "../faults/support/time";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { uniqueId } from "../support/redis";

// Five independent redis-servers, each behind its own Upstash-compatible proxy, reached through
// a fault-injecting pass-through so a test can slow one down.
let stacks: LocalStack[] = [];
let wires: PassThrough[] = [];
let clients: Redis[] = [];

beforeAll(async () => {
  stacks = await Promise.all(Array.from({ length: 5 }, () => startLocalStack()));
  wires = await Promise.all(stacks.map((stack) => startPassThrough({ target: stack.url })));
  clients = wires.map(
    (wire, index) =>
      new Redis({ url: wire.url, token: stacks[index]?.token ?? "", retry: false, enableTelemetry: false }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(wires.map((wire) => wire.close()));
  await Promise.all(stacks.map((stack) => stack.stop()));
});

const three = () => clients.slice(0, 3);
/** The `redis` option for a quorum of the first three instances. */
const quorumOfThree = () => quorum(three());
const server = (index: number) => {
  const redis = stacks[index]?.redis;
  if (!redis) throw new Error(`stack ${index} has no redis-server of its own`);
  return redis;
};
/** How many instances hold `key` with any value. */
async function holders(instances: Redis[], key: string): Promise<number> {
  const found = await Promise.all(instances.map((client) => client.exists(key)));
  return found.reduce((sum, value) => sum + value, 0);
}

describe("quorum lock over independent instances", () => {
  it.each([3, 5])("acquire, extend, status and release on %i instances", async (size) => {
    const instances = clients.slice(0, size);
    const id = uniqueId(`quorum-${size}`);
    const lock = new Lock({ id, redis: quorum(instances) });
    expect(await lock.acquire()).toBe(true);
    // The round settles once a majority granted; the other grants land after it, and stay.
    expect(await holders(instances, id)).toBeGreaterThan(size / 2);
    await lock.pending;
    expect(await holders(instances, id)).toBe(size);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await lock.extend(5_000)).toBe(true);
    expect(lock.remainingMs).toBeGreaterThan(10_000);
    expect(await new Lock({ id, redis: quorum(instances), retry: { attempts: 1 } }).acquire()).toBe(false);
    expect(await lock.release()).toBe(true);
    expect(await holders(instances, id)).toBe(0);
  });

  it("two clients on the same id never both hold it", async () => {
    const id = uniqueId("quorum-race");
    const locks = Array.from(
      { length: 10 },
      () => new Lock({ id, redis: quorumOfThree(), retry: { attempts: 1 } }),
    );
    const won = await Promise.all(locks.map((lock) => lock.acquire()));
    expect(won.filter(Boolean).length).toBeLessThanOrEqual(1);
    const statuses = await Promise.all(locks.map((lock) => lock.getStatus()));
    expect(statuses.filter((status) => status === "ACQUIRED").length).toBe(won.filter(Boolean).length);
    await Promise.all(locks.map((lock) => lock.release()));
    // Losers of split votes cleaned up after themselves.
    expect(await holders(three(), id)).toBe(0);
  });

  it("a failed attempt releases the instances it did take", async () => {
    const id = uniqueId("quorum-cleanup");
    await clients[0]?.set(id, "other-owner", { px: 10_000 });
    await clients[1]?.set(id, "other-owner", { px: 10_000 });
    const lock = new Lock({ id, redis: quorumOfThree(), retry: { attempts: 1 } });
    expect(await lock.acquire()).toBe(false);
    // The round is decided by the two refusals; the third instance's grant, if it came later, is
    // released in the background.
    await lock.pending;
    expect(await clients[2]?.exists(id)).toBe(0);
    await Promise.all(three().map((client) => client.del(id)));
  });

  it("a grant that arrives after its time is not a grant: the round fails and is undone", async () => {
    const id = uniqueId("quorum-slow");
    for (const wire of wires.slice(0, 3)) wire.faults.latency(150);
    try {
      // Each instance is waited for a third of the lease: 33 ms. Two silent instances of three
      // decide the round; the third is not waited for.
      const lock = new Lock({ id, redis: quorumOfThree(), lease: 100, retry: { attempts: 1 } });
      const error = await lock.acquire().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockRedisError);
      const instances = (error as LockRedisError).instances ?? [];
      expect(instances.length).toBeGreaterThanOrEqual(2);
      for (const { error: cause } of instances) expect(cause).toBeInstanceOf(InstanceTimeoutError);
      expect((error as Error).message).toMatch(/#\d: no reply within 33 ms/);
    } finally {
      for (const wire of wires.slice(0, 3)) wire.faults.reset();
    }
    // The late grants are released as they arrive (or expire with their 100 ms lease).
    await waitUntil(async () => (await holders(three(), id)) === 0, "no instance holding the lock");
  });

  it("after a round that succeeded, a late grant stays, and release clears it with the rest", async () => {
    const id = uniqueId("quorum-late-kept");
    const slow = wires[2];
    if (!slow) throw new Error("no third wire");
    slow.faults.latency(150);
    try {
      // Two fast grants decide the round; the third arrives about 150 ms later, well inside the
      // 3.3 s each instance is waited for, but after acquire() has returned.
      const lock = new Lock({ id, redis: quorumOfThree(), lease: 10_000 });
      expect(await lock.acquire()).toBe(true);
      expect(await holders(three(), id)).toBeGreaterThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await lock.pending;
      // Not undone: all three instances hold this lock's value.
      const values = await Promise.all(three().map((client) => client.get<string>(id)));
      expect(new Set(values).size).toBe(1);
      expect(values[0]).toEqual(expect.any(String));
      expect(await lock.release()).toBe(true);
    } finally {
      slow.faults.reset();
    }
    await waitUntil(async () => (await holders(three(), id)) === 0, "no instance holding the lock");
  });

  it("a Semaphore's two leases of one uuid may hold a permit each; each release frees its own", async () => {
    const id = uniqueId("quorum-same-uuid");
    const uuid = crypto.randomUUID();
    const semaphore = new Semaphore({ id, redis: quorumOfThree(), limit: 2, lease: 10_000 });
    const first = await semaphore.acquireOrThrow({ uuid });
    const second = await semaphore.acquireOrThrow({ uuid });
    await semaphore.pending;
    const permitsHeld = async () => {
      const keys = await clients[0]?.keys(`*${id}*permit*`);
      const values = await Promise.all((keys ?? []).map((key) => clients[0]?.get(key)));
      return values.filter((value) => value === uuid).length;
    };
    const held = await permitsHeld();
    // One permit: the second lease took the first's hold over, so the first's release sends nothing.
    expect(await first.release()).toBe(held === 2);
    expect(second.signal.aborted).toBe(false);
    expect(await permitsHeld()).toBe(1);
    const third = await new Semaphore({ id, redis: quorumOfThree(), limit: 2 }).acquire({
      retry: { attempts: 2 },
    });
    expect(third).toBeDefined();
    expect(await second.release()).toBe(true);
    await third?.release();
    await semaphore.pending;
    const left = await Promise.all(three().map((client) => client.keys(`*${id}*permit*`)));
    expect(left.flat()).toEqual([]);
  });

  it("refuses fencing, whose tokens need one counter", async () => {
    expect(() => new Lock({ id: "x", redis: quorumOfThree(), fencing: true })).toThrow(/fencing.*quorum/);
    await expect(new Lock({ id: "x", redis: quorumOfThree() }).acquire({ fencing: true })).rejects.toThrow(
      TypeError,
    );
  });

  it("refuses a fair lock or a fair semaphore, whose line would be one per instance", () => {
    expect(() => new FairLock({ id: "x", redis: quorumOfThree() })).toThrow(TypeError);
    expect(() => new Semaphore({ id: "x", redis: quorumOfThree(), limit: 2, fair: true })).toThrow(
      /fair.*quorum/,
    );
    expect(new Semaphore({ id: "x", redis: quorumOfThree(), limit: 2 }).limit).toBe(2);
  });

  it("quorum() rejects an even number of instances and anything but clients", () => {
    expect(() => quorum(clients.slice(0, 2))).toThrow(RangeError);
    expect(() => quorum([])).toThrow(RangeError);
    expect(() => quorum([clients[0] as Redis, {} as never, clients[1] as Redis])).toThrow(TypeError);
    expect(() => quorum([clients[0] as Redis, {} as never, clients[1] as Redis])).toThrow(
      /`quorum\(\)\[1\]`/,
    );
  });

  it("refuses an array as `redis`, naming quorum(), before any request", () => {
    expect(() => new Lock({ id: "x", redis: three() as never })).toThrow(TypeError);
    expect(() => new Lock({ id: "x", redis: three() as never })).toThrow(/quorum\(\[\.\.\.clients\]\)/);
  });
});

describe.each([3, 5])("quorum of %i when instances stop", (size) => {
  const instances = () => clients.slice(0, size);
  const minority = Array.from({ length: Math.floor(size / 2) }, (_, index) => size - 1 - index);
  const majority = Array.from({ length: Math.floor(size / 2) + 1 }, (_, index) => index);
  const stop = (indexes: number[]) => Promise.all(indexes.map((index) => server(index).stop()));
  const restart = (indexes: number[]) => Promise.all(indexes.map((index) => server(index).restart()));

  it("with a minority down, acquire, extend, auto-extend and release keep working", async () => {
    const id = uniqueId(`quorum-minority-${size}`);
    // Each member is waited for a third of the lease: 1 s leaves a loaded machine room to answer (600 ms,
    // 200 ms a member, failed once beside four busy loops).
    const lock = new Lock({ id, redis: quorum(instances()), lease: 3_000, autoExtend: { interval: 750 } });
    expect(await lock.acquire()).toBe(true);
    await stop(minority);
    try {
      await new Promise((resolve) => setTimeout(resolve, 4_000)); // more than a lease
      expect(lock.signal.aborted).toBe(false);
      expect(await lock.extend(1_000)).toBe(true);
      expect(await lock.getStatus()).toBe("ACQUIRED");
      expect(await lock.release()).toBe(true);
      const other = new Lock({ id, redis: quorum(instances()) });
      expect(await other.acquire()).toBe(true);
      expect(await other.release()).toBe(true);
    } finally {
      await restart(minority);
    }
  });

  it("with a majority down, acquire fails within its budget naming the failed instances, then recovers", async () => {
    const id = uniqueId(`quorum-majority-${size}`);
    await stop(majority);
    try {
      const lock = new Lock({ id, redis: quorum(instances()), retry: { delay: 50 } });
      // A timeout with no count of tries: only the 1 s budget ends the acquire (each member is waited for
      // 3.3 s at most). It must end before a plain 10 s timer started beside it, late alike on a loaded
      // machine; the signal ends an acquire the budget did not.
      const stop = new AbortController();
      const timer = new AbortController();
      const acquiring = lock
        .acquireOrThrow({ timeout: 1_000, signal: stop.signal })
        .catch((caught: unknown) => caught);
      let error: unknown;
      try {
        const first = await Promise.race([
          acquiring.then((caught) => {
            error = caught;
            return "ended" as const;
          }),
          pause(10_000, "timer first" as const, { signal: timer.signal }),
        ]);
        expect(first).toBe("ended");
      } finally {
        timer.abort();
        stop.abort();
        await acquiring;
      }
      expect(error).toBeInstanceOf(LockAcquisitionError);
      expect((error as LockAcquisitionError).reason).toBe("redis-error");
      expect((error as LockAcquisitionError).cause).toBeInstanceOf(LockRedisError);
      expect((error as LockAcquisitionError).instances?.map((entry) => entry.instance).sort()).toEqual(
        majority,
      );
      // Its last round's grants on the live minority are undone in the background: on a loaded machine
      // (four busy loops) the next acquire's rounds found them still held, and ended "held".
      await lock.pending;
      // The same when the acquire ends by its tries.
      const tried = await lock
        .acquireOrThrow({ retry: { attempts: 3, delay: 50 } })
        .catch((caught: unknown) => caught);
      expect(tried).toBeInstanceOf(LockAcquisitionError);
      const failure = tried as LockAcquisitionError;
      expect(failure.reason).toBe("redis-error");
      expect(failure.instances?.map((entry) => entry.instance).sort()).toEqual(majority);
      expect(failure.cause).toBeInstanceOf(LockRedisError);
      // The message names each failure once, in order, without repeating what the quorum said.
      const message = (failure.cause as Error).message;
      expect(message).toContain(
        `${majority.length} of ${size} instances failed: #${majority[0]}: Redis could not be reached`,
      );
      expect(message.split("could not be reached")).toHaveLength(majority.length + 1);
      expect((failure.cause as LockRedisError).instances?.map((entry) => entry.instance).sort()).toEqual(
        majority,
      );
      await lock.pending;
      expect(await holders(instances().slice(majority.length), id)).toBe(0);
      await expect(lock.acquire()).rejects.toBeInstanceOf(LockRedisError);
    } finally {
      await restart(majority);
    }
    const lock = new Lock({ id, redis: quorum(instances()) });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  it("a held lock whose majority goes away is reported lost, not kept", async () => {
    const id = uniqueId(`quorum-lost-${size}`);
    // Each member is waited for a third of the lease: 500 ms (166 ms a member) failed the acquire once
    // beside four busy loops.
    const lock = new Lock({ id, redis: quorum(instances()), lease: 1_500, autoExtend: { interval: 300 } });
    await lock.acquireOrThrow();
    const signal = lock.signal;
    await stop(majority);
    try {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      expect((signal.reason as { reason: string }).reason).toBe("expired");
    } finally {
      await restart(majority);
    }
  });
});
