// Review helper-171 (6/6 and 6/6): a fair waiter that learns of its turn by polling (no wake-ups on its
// client, or `wakeOnRelease: false`) missed the grant a release handed it when its lease was shorter than its
// wait between polls: the grant lasted min(lease, maxDelay + 2 s) and ran out before its next poll, the
// waiter behind it went first, and the lock was held for nobody meanwhile. A grant lasts maxDelay + 2 s.
// Review helper-172 (24/24 on that change): a waiter that confirmed such a grant with a try (it polls, or
// wants a fencing token) counted its lease from the try, and was told "expired" while Redis held its token
// for the rest of the grant. A fair try that confirms a hold reads its PTTL.
import { describe, expect, it } from "vitest";
import { enableWakeUps, FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { pause, waitUntil } from "./support/time";

const { ioredis, clients } = useBothClients();

/** Two polling waiters in line, then the holder releases: the order they were served in. */
async function served(make: (lease: number, delay: number) => FairLock | Semaphore, holdFor: number) {
  const id = make(0, 0).id;
  const queue = companionKey(id, ":queue");
  const look = ioredis();
  const holder = make(30_000, 100);
  const held = holder instanceof Semaphore ? await holder.acquireOrThrow() : await holder.acquireOrThrow();
  const order: string[] = [];
  const wait = async (name: string, lock: FairLock | Semaphore) => {
    const lease =
      lock instanceof Semaphore
        ? await lock.acquire({ timeout: 20_000 })
        : await lock.acquire({ timeout: 20_000 });
    order.push(`${name}:${Boolean(lease)}`);
    await pause(1_000);
    if (lease === true) await (lock as FairLock).release();
    else if (lease) await lease.release();
  };
  // The first waiter: a lease of 1 s, polls 2 s apart. The second polls often.
  const first = wait("first", make(1_000, 2_000));
  await waitUntil(async () => (await look.zcard(queue)) >= 1, "the first waiter in line");
  const second = wait("second", make(1_000, 100));
  await waitUntil(async () => (await look.zcard(queue)) >= 2, "the second waiter in line");
  await pause(holdFor);
  await (held as { release(): Promise<boolean> }).release();
  await Promise.all([first, second]);
  return order;
}

describe.each(["ioredis", "upstash"] as const)("%s, waiters that poll", (name) => {
  it("FairLock: the first in line is served first", async () => {
    const id = uniqueId("fair-polling-grant");
    const make = (lease: number, delay: number) =>
      new FairLock({
        id,
        redis: clients[name](),
        lease: lease || 1_000,
        wakeOnRelease: false,
        retry: { delay: delay || 100 },
      });
    expect(await served(make, 100)).toEqual(["first:true", "second:true"]);
  }, 40_000);

  it("fair Semaphore: the first in line is served first", async () => {
    const id = uniqueId("fair-polling-grant");
    const make = (lease: number, delay: number) =>
      new Semaphore({
        id,
        redis: clients[name](),
        limit: 1,
        fair: true,
        lease: lease || 1_000,
        wakeOnRelease: false,
        retry: { delay: delay || 100 },
      });
    expect(await served(make, 100)).toEqual(["first:true", "second:true"]);
  }, 40_000);
});

/** A waiter with a 1 s lease, handed the lock by a release, confirms with a try: what its signal says. */
async function confirmedGrant(name: "ioredis" | "upstash", mode: "polls" | "wants a fencing token") {
  const id = uniqueId("fair-polling-grant");
  const look = ioredis();
  const client = () => {
    const redis = clients[name]();
    if (name === "ioredis" && mode !== "polls") enableWakeUps(redis as never);
    return redis;
  };
  const holder = new FairLock({ id, redis: client(), lease: 30_000 });
  await holder.acquireOrThrow();
  const fencing = mode !== "polls";
  const retry = { delay: 2_000, maxDelay: 3_000 }; // a grant of 5 s
  const waiter = new FairLock({ id, redis: client(), lease: 1_000, wakeOnRelease: fencing, fencing, retry });
  const acquired = waiter.acquire({ timeout: 15_000 });
  await waitUntil(async () => (await look.zcard(companionKey(id, ":queue"))) > 0, "the waiter in line");
  await pause(200);
  await holder.release();
  expect(await acquired).toBe(true);
  const signal = waiter.signal;
  const lost = new Promise<string>((resolve) =>
    signal.addEventListener("abort", () => resolve((signal.reason as { reason: string }).reason), {
      once: true,
    }),
  );
  const reason = await Promise.race([lost, pause(10_000).then(() => "none")]);
  // The deadline here is early by the drift allowance (1 % of the 5 s grant, and 2 ms) and by the try's
  // way to Redis, whose expiry counts from the script's run (a try slowed beside other tests outlasted a
  // fixed 200 ms): the key must be gone soon after, not the grant's seconds after the lease.
  const gone = waitUntil(async () => (await look.pttl(id)) < 0, "gone", { timeoutMs: 1_500 });
  const key = await gone.then(
    () => "gone",
    () => "held",
  );
  const seen = { reason, key, status: await waiter.getStatus() };
  await waiter.release();
  return seen;
}

describe.each(["ioredis", "upstash"] as const)(
  "%s, a grant longer than the lease, confirmed by a try",
  (name) => {
    it.each(["polls", "wants a fencing token"] as const)(
      'a waiter that %s is told "expired" only once Redis dropped the key',
      async (mode) => {
        expect(await confirmedGrant(name, mode)).toEqual({ reason: "expired", key: "gone", status: "FREE" });
      },
      30_000,
    );
  },
);
