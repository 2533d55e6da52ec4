import { describe, expect, it } from "vitest";
import { type Lease, LockAcquisitionError, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { abortTime, pause, within } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();

/** `count` semaphores on one id, as `count` processes would make them. */
function holders(id: string, count: number, limit: number, options: object = {}): Semaphore[] {
  return Array.from(
    { length: count },
    () => new Semaphore({ id, redis, limit, retry: { attempts: 1 }, ...options }),
  );
}

/** The keys of a semaphore's permits: `{id}:permit:1` and on. */
function permitKeys(id: string, limit: number): string[] {
  return Array.from({ length: limit }, (_, index) => companionKey(id, `:permit:${index + 1}`));
}

/** A lease that must be there. */
function held(lease: Lease | undefined): Lease {
  expect(lease).toBeDefined();
  return lease as Lease;
}

describe("Semaphore", () => {
  it("admits `limit` holders at once and refuses the next, until one releases", async () => {
    const id = uniqueId("sem");
    const [a, b, c, d] = holders(id, 4, 3) as [Semaphore, Semaphore, Semaphore, Semaphore];
    const leases = await Promise.all([a.acquire(), b.acquire(), c.acquire()]);
    const [first, second, third] = leases.map(held) as [Lease, Lease, Lease];
    expect(await d.acquire()).toBeUndefined();
    expect(await second.getStatus()).toBe("ACQUIRED");
    expect(await second.release()).toBe(true);
    expect(await second.release()).toBe(false);
    expect(await second.getStatus()).toBe("FREE");
    const fourth = held(await d.acquire());
    await Promise.all([first.release(), third.release(), fourth.release()]);
  });

  it("an expired holder frees its permit by itself", async () => {
    const id = uniqueId("sem-expiry");
    const [short, waiter] = holders(id, 2, 1) as [Semaphore, Semaphore];
    const expiring = held(await short.acquire({ lease: 600 }));
    expect(await waiter.acquire()).toBeUndefined();
    await pause(800);
    const next = held(await waiter.acquire());
    expect(await expiring.getStatus()).toBe("FREE");
    await next.release();
  });

  it("extends the permit it holds, and checks it; permit(uuid) acts on it from elsewhere", async () => {
    const id = uniqueId("sem-extend");
    const uuid = crypto.randomUUID();
    const [holder] = holders(id, 1, 2, { lease: 3_000 }) as [Semaphore];
    const lease = held(await holder.acquire({ uuid }));
    expect(await lease.extend(5_000)).toBe(true);
    expect(lease.remainingMs).toBeGreaterThan(5_000);
    const elsewhere = new Semaphore({ id, redis, limit: 2 }).permit(uuid);
    expect(await elsewhere.getStatus()).toBe("ACQUIRED");
    expect(elsewhere.signal.aborted).toBe(false);
    expect(elsewhere.remainingMs).toBeGreaterThan(5_000);
    expect(await elsewhere.release()).toBe(true);
    expect(await lease.getStatus()).toBe("FREE");
  });

  it("keeps its permits in the id's hash slot, one key per permit, holding the holder's token", async () => {
    const id = uniqueId("sem-keys");
    const uuid = crypto.randomUUID();
    const [holder] = holders(id, 1, 3) as [Semaphore];
    const lease = await holder.acquireOrThrow({ uuid });
    const values = await Promise.all(permitKeys(id, 3).map((key) => redis.get(key)));
    expect(values.filter((value) => value === uuid)).toHaveLength(1);
    await lease.release();
  });

  it("issues increasing fencing tokens across holders", async () => {
    const id = uniqueId("sem-fence");
    const [a, b] = holders(id, 2, 2, { fencing: true }) as [Semaphore, Semaphore];
    const first = await a.acquireOrThrow();
    const second = await b.acquireOrThrow();
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken as number);
    await first.release();
    const third = await a.acquireOrThrow();
    expect(third.fencingToken).toBeGreaterThan(second.fencingToken as number);
    await Promise.all([second.release(), third.release()]);
  });

  it("works with await using, runExclusive and acquireOrThrow's error", async () => {
    const id = uniqueId("sem-using");
    const semaphore = new Semaphore({ id, redis, limit: 1, retry: { attempts: 1 } });
    {
      await using lease = await semaphore.acquireOrThrow();
      const other = new Semaphore({ id, redis, limit: 1, retry: { attempts: 1 } });
      await expect(other.acquireOrThrow()).rejects.toBeInstanceOf(LockAcquisitionError);
      expect(lease.signal.aborted).toBe(false);
    }
    expect(await semaphore.runExclusive(async () => "done")).toBe("done");
    const after = held(await new Semaphore({ id, redis, limit: 1 }).acquire());
    expect(await after.release()).toBe(true);
  });

  it("renews with auto-extend and reports a lost permit", async () => {
    const id = uniqueId("sem-auto");
    const semaphore = new Semaphore({ id, redis, limit: 2, lease: 1_000, autoExtend: { interval: 100 } });
    const lease = await semaphore.acquireOrThrow();
    const signal = lease.signal;
    const lost = abortTime(signal);
    await pause(1_500); // more than a lease: only renewals keep it
    expect(signal.aborted).toBe(false);
    for (const key of permitKeys(id, 2)) await redis.del(key);
    await within(lost, 5_000, "the lease's signal to report the loss");
    expect((signal.reason as { reason: string }).reason).toBe("taken");
  });

  it("a waiter gets a permit as soon as one is released", async () => {
    const id = uniqueId("sem-wait");
    const [a, b] = holders(id, 2, 2) as [Semaphore, Semaphore];
    const first = await a.acquireOrThrow();
    const second = await b.acquireOrThrow();
    const waiter = new Semaphore({ id, redis, limit: 2 });
    const waiting = waiter.acquire({ timeout: 5_000, retry: { delay: 20 } });
    setTimeout(() => void second.release(), 200);
    const third = held(await waiting);
    await Promise.all([first.release(), third.release()]);
  });
});

describe("one Semaphore shared by concurrent callers", () => {
  it("a caller's failed acquire, loss or release touches no other caller's lease", async () => {
    const id = uniqueId("sem-shared-apart");
    const semaphore = new Semaphore({ id, redis, limit: 2, retry: { attempts: 1 } });
    const [lostToken, keptToken] = [crypto.randomUUID(), crypto.randomUUID()];
    const [lost, kept] = (
      await Promise.all([semaphore.acquire({ uuid: lostToken }), semaphore.acquire({ uuid: keptToken })])
    ).map(held) as [Lease, Lease];
    const [lostSignal, keptSignal] = [lost.signal, kept.signal];
    // A third caller of the same instance finds both permits taken: it fails alone.
    expect(await semaphore.acquire()).toBeUndefined();
    expect(await lost.getStatus()).toBe("ACQUIRED");
    expect(await kept.getStatus()).toBe("ACQUIRED");
    // One caller's permit is taken from it: its own signal aborts, and only its own.
    for (const key of permitKeys(id, 2))
      if ((await redis.get<string>(key)) === lostToken) await redis.del(key);
    expect(await lost.getStatus()).toBe("FREE");
    expect(lostSignal.aborted).toBe(true);
    expect(keptSignal.aborted).toBe(false);
    expect(await kept.getStatus()).toBe("ACQUIRED");
    // A new caller takes the freed permit; the one left releases its own.
    const next = held(await semaphore.acquire());
    expect(await lost.release()).toBe(false);
    expect(await next.getStatus()).toBe("ACQUIRED");
    expect(await kept.release()).toBe(true);
    expect(keptSignal.aborted).toBe(false);
    expect(await next.release()).toBe(true);
    expect(await Promise.all(permitKeys(id, 2).map((key) => redis.exists(key)))).toEqual([0, 0]);
  });
});
