// Found by `npm run chaos` (scripts/chaos/RESULTS.md): over HTTP a request, not only its reply, can be
// late. A try held on the way reaches Redis after a later try of the same token: it finds its own
// token, confirms it, and used to name itself in the grant (a permit's receipt), so its undo, once
// its answer came, freed the lock the later try held while the library still said held. Each request
// id now carries its order, and a late try leaves a newer request's name in place. On a quorum, the
// undo of a try also waits for each member's take of it, which it could overtake.
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairLock, type Lease, Lock, quorum, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { uniqueId } from "../support/redis";
import { waitUntil } from "./support/time";

/** How long the pass-through holds the late request, ms: past the first acquire's timeout. */
const HELD_MS = 300;
const LEASE_MS = 5_000;
const options = { enableTelemetry: false, retry: false } as const;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  readonly stack: LocalStack;
  readonly wire: PassThrough;
  /** Through the pass-through: what the lock uses. */
  readonly redis: Redis;
  /** Straight to the proxy: what the checks use. */
  readonly direct: Redis;
}

let servers: Server[] = [];

beforeAll(async () => {
  servers = await Promise.all(
    [0, 1, 2].map(async () => {
      const stack = await startLocalStack();
      const wire = await startPassThrough({ target: stack.url });
      return {
        stack,
        wire,
        redis: new Redis({ url: wire.url, token: stack.token, ...options }),
        direct: new Redis({ url: stack.url, token: stack.token, ...options }),
      };
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.wire.close();
  await Promise.all(servers.map((server) => server.stack.stop()));
});

/** A lock or a semaphore as the test uses it: acquire with a uuid, the time the library says is left. */
interface Subject {
  acquire(config: { uuid: string; timeout: number }): Promise<boolean>;
  remainingMs(): number;
  release(): Promise<unknown>;
  readonly pending: Promise<void>;
  /** The keys that may hold the token. */
  readonly keys: readonly string[];
}

const subjects: Record<string, (redis: Redis) => Subject> = {
  Lock: (redis) => lockSubject(new Lock({ id: uniqueId("late-take"), redis, lease: LEASE_MS })),
  FairLock: (redis) => lockSubject(new FairLock({ id: uniqueId("late-take-fair"), redis, lease: LEASE_MS })),
  Semaphore: (redis) => {
    const semaphore = new Semaphore({ id: uniqueId("late-take-sem"), redis, lease: LEASE_MS, limit: 2 });
    let lease: Lease | undefined;
    return {
      acquire: async (config) => {
        lease = await semaphore.acquire(config);
        return lease !== undefined;
      },
      remainingMs: () => lease?.remainingMs ?? 0,
      release: async () => lease?.release(),
      get pending() {
        return semaphore.pending;
      },
      keys: [1, 2].map((permit) => companionKey(semaphore.id, `:permit:${permit}`)),
    };
  },
};

function lockSubject(lock: Lock): Subject {
  return {
    acquire: (config) => lock.acquire(config),
    remainingMs: () => lock.remainingMs,
    release: () => lock.release(),
    get pending() {
      return lock.pending;
    },
    keys: [lock.id],
  };
}

describe.each(Object.keys(subjects))("%s over HTTP, a try that reaches Redis after a later one", (kind) => {
  it("of the same uuid: its undo leaves the later acquisition's hold in Redis", async () => {
    const server = servers[0] as Server;
    const subject = (subjects[kind] as (redis: Redis) => Subject)(server.redis);
    // Warm up, so that the next request is the take itself (not a script load).
    expect(await subject.acquire({ uuid: crypto.randomUUID(), timeout: 2_000 })).toBe(true);
    await subject.release();
    const uuid = crypto.randomUUID();
    server.wire.faults.delayNext(1, HELD_MS);
    // Its take is held past the timeout: no answer, so the acquire fails (and undoes it once it lands).
    await expect(subject.acquire({ uuid, timeout: 100 })).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    expect(await subject.acquire({ uuid, timeout: 2_000 })).toBe(true);
    await pause(HELD_MS + 200);
    await subject.pending;
    expect(subject.remainingMs()).toBeGreaterThan(0);
    const values = await Promise.all(subject.keys.map((key) => server.direct.get<string>(key)));
    expect(values).toContain(uuid);
    await subject.release();
  }, 20_000);
});

describe("a quorum over HTTP, a round's try that reaches a member after the next round's", () => {
  it("its undo leaves the next round's grant: the token stays on a majority", async () => {
    const [a, b, c] = servers as [Server, Server, Server];
    const id = uniqueId("late-take-quorum");
    const lock = new Lock({ id, redis: quorum(servers.map((server) => server.redis)), lease: LEASE_MS });
    expect(await lock.acquire()).toBe(true);
    await lock.release();
    await a.direct.set(id, "someone-else-a", { px: 10_000 });
    await c.direct.set(id, "someone-else-c", { px: 10_000 });
    b.wire.faults.delayNext(1, HELD_MS);
    const ranOnA = a.wire.ran();
    const acquiring = lock.acquire({ timeout: 2_000 });
    // Round 1 is refused by a and c at once while its take to b is held; free a before round 2, once round 1
    // ran there (waited for, not assumed after a fixed 50 ms).
    await waitUntil(() => a.wire.ran() > ranOnA, "round 1's try on a", { intervalMs: 1 });
    await a.direct.del(id);
    expect(await acquiring).toBe(true);
    await pause(HELD_MS + 200);
    await lock.pending;
    expect(lock.remainingMs).toBeGreaterThan(0);
    const values = await Promise.all(servers.map((server) => server.direct.get<string>(id)));
    const ours = values.filter((value) => value !== null && !value.startsWith("someone-else"));
    expect(ours.length).toBeGreaterThanOrEqual(2);
    await lock.release();
    await c.direct.del(id);
  }, 20_000);

  it("a try its acquire gave up on, granted later: each member's undo follows its own take", async () => {
    const [a, b, c] = servers as [Server, Server, Server];
    const id = uniqueId("late-take-undo");
    const lock = new Lock({ id, redis: quorum(servers.map((server) => server.redis)), lease: LEASE_MS });
    expect(await lock.acquire()).toBe(true);
    await lock.release();
    // The call gives up after 30 ms; a and b grant at 60 ms, c's take lands at 400 ms, after the
    // undo of the try would have reached c had it not waited for c's take.
    a.wire.faults.delayNext(1, 60);
    b.wire.faults.delayNext(1, 60);
    c.wire.faults.delayNext(1, 400);
    const uuid = crypto.randomUUID();
    await expect(lock.acquire({ uuid, timeout: 30 })).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
    await lock.pending;
    const values = await Promise.all(servers.map((server) => server.direct.get<string>(id)));
    expect(values.filter((value) => value === uuid)).toEqual([]);
  }, 20_000);
});

describe.each([
  ["Lock", (id: string, redis: Redis) => new Lock({ id, redis, lease: LEASE_MS })],
  ["FairLock", (id: string, redis: Redis) => new FairLock({ id, redis, lease: LEASE_MS })],
  ["Semaphore", (id: string, redis: Redis) => new Semaphore({ id, redis, limit: 1, lease: LEASE_MS })],
] as const)("%s over HTTP, an extend that reaches Redis after a later extend of its lease", (_kind, make) => {
  // An extend acts only on the hold its lease names (the try that took it and its extends); the later
  // extend, landing first, must not leave the earlier one naming no hold: both are the lease's.
  it("takes effect too", async () => {
    const { wire, redis, direct } = servers[0] as Server;
    const id = uniqueId("late-extend");
    const lease = await make(id, redis).acquireOrThrow();
    expect(await lease.extend(0)).toBe(true); // the extend script is cached: both calls send one request
    wire.faults.delayNext(1, HELD_MS);
    const first = lease.extend(10_000);
    await pause(50); // apart from the first, not in its auto-pipelined request
    expect(await Promise.all([first, lease.extend(20_000)])).toEqual([true, true]);
    const pttls = await Promise.all([direct.pttl(id), direct.pttl(companionKey(id, ":permit:1"))]);
    expect(Math.max(...pttls)).toBeGreaterThan(LEASE_MS + 25_000);
    expect(await lease.release()).toBe(true);
  });
});
