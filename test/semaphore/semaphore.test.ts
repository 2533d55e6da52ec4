import { describe, expect, it } from "vitest";
import { LockAcquisitionError, Semaphore } from "../../src/index";
import { permitKeys } from "../../src/store/permit-store";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` semaphores on one id, as `count` processes would make them. */
function holders(id: string, count: number, limit: number, options: object = {}): Semaphore[] {
  return Array.from(
    { length: count },
    () => new Semaphore({ id, redis, limit, retry: { attempts: 1 }, ...options }),
  );
}

describe("Semaphore", () => {
  it("admits `limit` holders at once and refuses the next, until one releases", async () => {
    const id = uniqueId("sem");
    const [a, b, c, d] = holders(id, 4, 3) as [Semaphore, Semaphore, Semaphore, Semaphore];
    expect(await Promise.all([a.acquire(), b.acquire(), c.acquire()])).toEqual([true, true, true]);
    expect(await d.acquire()).toBe(false);
    expect(await d.getStatus()).toBe("FREE");
    expect(await b.getStatus()).toBe("ACQUIRED");
    expect(await b.release()).toBe(true);
    expect(await b.release()).toBe(false);
    expect(await d.acquire()).toBe(true);
    await Promise.all([a.release(), c.release(), d.release()]);
  });

  it("an expired holder frees its permit by itself", async () => {
    const id = uniqueId("sem-expiry");
    const [short, waiter] = holders(id, 2, 1) as [Semaphore, Semaphore];
    expect(await short.acquire({ lease: 200 })).toBe(true);
    expect(await waiter.acquire()).toBe(false);
    await pause(300);
    expect(await waiter.acquire()).toBe(true);
    expect(await short.getStatus()).toBe("FREE");
    await waiter.release();
  });

  it("extends the permit it holds, and checks it; a seeded uuid acts on it from elsewhere", async () => {
    const id = uniqueId("sem-extend");
    const uuid = crypto.randomUUID();
    const [holder] = holders(id, 1, 2, { lease: 1_000 }) as [Semaphore];
    expect(await holder.acquire({ uuid })).toBe(true);
    expect(await holder.extend(5_000)).toBe(true);
    expect(holder.remainingMs).toBeGreaterThan(5_000);
    const elsewhere = new Semaphore({ id, redis, limit: 2, uuid });
    expect(await elsewhere.getStatus()).toBe("ACQUIRED");
    expect(elsewhere.signal.aborted).toBe(false);
    expect(await elsewhere.release()).toBe(true);
    expect(await holder.getStatus()).toBe("FREE");
  });

  it("keeps its permits in the id's hash slot, one key per permit, holding the holder's token", async () => {
    const id = uniqueId("sem-keys");
    const uuid = crypto.randomUUID();
    const [holder] = holders(id, 1, 3) as [Semaphore];
    await holder.acquireOrThrow({ uuid });
    const values = await Promise.all(permitKeys(id, 3).map((key) => redis.get(key)));
    expect(values.filter((value) => value === uuid)).toHaveLength(1);
    await holder.release();
  });

  it("issues increasing fencing tokens across holders", async () => {
    const id = uniqueId("sem-fence");
    const [a, b] = holders(id, 2, 2, { fencing: true }) as [Semaphore, Semaphore];
    await a.acquireOrThrow();
    await b.acquireOrThrow();
    expect(b.fencingToken).toBeGreaterThan(a.fencingToken as number);
    await a.release();
    await a.acquireOrThrow();
    expect(a.fencingToken).toBeGreaterThan(b.fencingToken as number);
    await Promise.all([a.release(), b.release()]);
  });

  it("works with await using, runExclusive and acquireOrThrow's error", async () => {
    const id = uniqueId("sem-using");
    const semaphore = new Semaphore({ id, redis, limit: 1, retry: { attempts: 1 } });
    {
      await using held = await semaphore.acquireOrThrow();
      const other = new Semaphore({ id, redis, limit: 1, retry: { attempts: 1 } });
      await expect(other.acquireOrThrow()).rejects.toBeInstanceOf(LockAcquisitionError);
      expect(held.signal.aborted).toBe(false);
    }
    expect(await semaphore.runExclusive(async () => "done")).toBe("done");
    expect(await new Semaphore({ id, redis, limit: 1 }).acquire()).toBe(true);
  });

  it("renews with auto-extend and reports a lost permit", async () => {
    const id = uniqueId("sem-auto");
    const semaphore = new Semaphore({ id, redis, limit: 2, lease: 1_000, autoExtend: { interval: 100 } });
    await semaphore.acquireOrThrow();
    const signal = semaphore.signal;
    await pause(1_500); // more than a lease: only renewals keep it
    expect(signal.aborted).toBe(false);
    for (const key of permitKeys(id, 2)) await redis.del(key);
    if (!signal.aborted) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    }
    expect((signal.reason as { reason: string }).reason).toBe("taken");
  });

  it("a waiter gets a permit as soon as one is released", async () => {
    const id = uniqueId("sem-wait");
    const [a, b] = holders(id, 2, 2) as [Semaphore, Semaphore];
    await a.acquireOrThrow();
    await b.acquireOrThrow();
    const waiter = new Semaphore({ id, redis, limit: 2 });
    const waiting = waiter.acquire({ timeout: 5_000, retry: { delay: 20 } });
    setTimeout(() => void b.release(), 200);
    expect(await waiting).toBe(true);
    await Promise.all([a.release(), waiter.release()]);
  });
});
