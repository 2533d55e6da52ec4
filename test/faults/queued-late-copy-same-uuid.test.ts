// Review helper-210 (helper-207's two suspects, keys.md "Not caught"): a late copy of a fair waiter's try (its
// client re-sent it; the first copy lands after the re-sent one ran) while the waiter's `uuid` holds a permit
// for another acquisition. The copy confirmed that hold, adding its request id to the permit's list; the
// other acquisition then ended (its try undone, or its waiter gone before it learned of a release's grant),
// which frees a permit only once all on its list were abandoned: the copy's id was not, and the permit stayed
// held for nobody for a lease.
// S1: the waiter is in line, and the copy was sent no later than a try of it that ran (`ran`).
// S2: the copy is of the try that found the waiter's name spent (buried), landing before that name's leave.
// Each step waits for the one before to have run in Redis: the order is by construction.
import { describe, expect, it } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const LEASE_MS = 20_000;
// The waiters' next tries are this far off: the test is done with them long before (each step takes ms).
const FAR = { delay: 10_000, maxDelay: 10_000 } as const;

interface Taker {
  acquireOrThrow(config?: object): Promise<{ release(): Promise<boolean> }>;
  acquire(config?: object): Promise<unknown>;
  readonly pending: Promise<void>;
}

const kinds = [
  [
    "FairLock",
    (id: string, redis: unknown): Taker =>
      new FairLock({ id, redis: redis as never, lease: LEASE_MS, wakeOnRelease: false }),
    (id: string) => id,
  ],
  [
    "fair Semaphore",
    (id: string, redis: unknown): Taker =>
      new Semaphore({
        id,
        redis: redis as never,
        lease: LEASE_MS,
        limit: 1,
        fair: true,
        wakeOnRelease: false,
      }),
    (id: string) => companionKey(id, ":permit:1"),
  ],
] as const;

/** Requests that reached the pass-through and have not run in Redis (held, ghosted). */
function notRun(): number {
  const { passThrough } = wire();
  return passThrough.stats.requests - passThrough.ran();
}

/** A client through the pass-through (re-sending a request whose connection broke), its scripts cached. */
async function resendingClient(): Promise<ReturnType<typeof clientFor>> {
  const redis = clientFor({ url: wire().passThrough.url, token: stack().endpoint.token });
  const warm = new Semaphore({ id: uniqueId("same-uuid-warm"), redis, limit: 1, fair: true });
  await (await warm.acquireOrThrow()).release(); // the next try is one request
  return redis;
}

/** Settles with how an acquire ended: "acquired", or "not acquired" (false, undefined, an error). */
function outcome(acquiring: Promise<unknown>): Promise<{ got: unknown } | { error: unknown }> {
  return acquiring.then(
    (got) => ({ got }),
    (error: unknown) => ({ error }),
  );
}

/** What a permit key holds once all settled: nothing, or a token and its PTTL (held for nobody). */
async function left(key: string): Promise<{ held: string | null; pttl: number }> {
  const { direct } = wire();
  return { held: await direct.get(key), pttl: await direct.pttl(key) };
}

/** A lock `id` held by a holder, the key of its permit, a uuid, and a re-sending client warmed up. */
async function arrange(
  name: string,
  make: (id: string, redis: unknown) => Taker,
  keyOf: (id: string) => string,
) {
  const { passThrough, direct } = wire();
  const resending = await resendingClient();
  const id = uniqueId(name);
  const holder = await make(id, direct).acquireOrThrow({ retry: { attempts: 1 } });
  return { passThrough, direct, resending, id, permit: keyOf(id), uuid: crypto.randomUUID(), holder };
}

describe.each(kinds)(
  "S1, %s: a late copy of a queued waiter's try, its uuid held for another",
  (_n, make, keyOf) => {
    it("by a waiter ahead in line a release handed it to, gone before it knew: the permit is not held for nobody", async () => {
      const { passThrough, direct, resending, id, permit, uuid, holder } = await arrange(
        "same-uuid-grant",
        make,
        keyOf,
      );
      // The other acquisition of the uuid: first in line.
      const other = make(id, direct);
      const otherGiven = new AbortController();
      const otherDone = outcome(other.acquire({ uuid, signal: otherGiven.signal, retry: FAR }));
      await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "the other queued");
      // The waiter: its first try's first copy held; the re-sent one queues it, second.
      const land = passThrough.faults.ghostHeld(1);
      const waiter = make(id, resending);
      const waiterGiven = new AbortController();
      const waiterDone = outcome(waiter.acquire({ uuid, signal: waiterGiven.signal, retry: FAR }));
      await waitUntil(
        async () => (await direct.zcard(companionKey(id, ":queue"))) === 2,
        "the waiter queued",
      );
      await waitUntil(() => notRun() === 1, "only the first copy held");
      expect(await holder.release()).toBe(true); // hands the permit to the other, first in line
      expect(await direct.get(permit)).toBe(uuid);
      land();
      await waitUntil(() => notRun() === 0, "the late copy ran");
      otherGiven.abort(); // the other gives up, the grant unknown to it: its leave frees the grant
      const otherEnd = await otherDone;
      await other.pending;
      waiterGiven.abort();
      const waiterEnd = await waiterDone;
      await waiter.pending;
      const got = (end: { got: unknown } | { error: unknown }) => "got" in end && !!end.got;
      expect({ other: got(otherEnd), waiter: got(waiterEnd), ...(await left(permit)) }).toEqual({
        other: false,
        waiter: false,
        held: null,
        pttl: -2,
      });
    }, 20_000);
  },
);

describe("S1, a fair Semaphore of 2: a late copy of a queued waiter's try, its uuid held for another", () => {
  it("whose try is undone: the permit is not held for nobody", async () => {
    const { passThrough, direct } = wire();
    const resending = await resendingClient();
    const id = uniqueId("same-uuid-undone");
    const options = { id, lease: LEASE_MS, limit: 2, fair: true, wakeOnRelease: false } as const;
    const permits = [companionKey(id, ":permit:1"), companionKey(id, ":permit:2")];
    const uuid = crypto.randomUUID();
    await new Semaphore({ ...options, redis: direct }).acquireOrThrow({ retry: { attempts: 1 } });
    await new Semaphore({ ...options, redis: direct }).acquireOrThrow({ retry: { attempts: 1 } });
    // The waiter: its first try's first copy held; the re-sent one queues it.
    const land = passThrough.faults.ghostHeld(1);
    const waiter = new Semaphore({ ...options, redis: resending });
    const waiterGiven = new AbortController();
    const waiterDone = outcome(waiter.acquire({ uuid, signal: waiterGiven.signal, retry: FAR }));
    await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "the waiter queued");
    await waitUntil(() => notRun() === 1, "only the first copy held");
    await direct.del(...permits); // both free, nothing handed on (as leases running out)
    // Another acquisition of the uuid takes one (more free than waiters); its caller gives up before the
    // reply comes: its try is undone once answered.
    const other = new Semaphore({
      ...options,
      redis: clientFor({ url: passThrough.url, token: stack().endpoint.token }),
    });
    const answer = passThrough.faults.delayRepliesHeld(1);
    const otherGiven = new AbortController();
    const otherDone = outcome(other.acquire({ uuid, signal: otherGiven.signal, retry: { attempts: 1 } }));
    try {
      await waitUntil(async () => (await direct.get(permits[0] as string)) === uuid, "taken by the other");
      await waitUntil(() => notRun() === 1, "the other's try ran");
      land();
      await waitUntil(() => notRun() === 0, "the late copy ran");
    } finally {
      land();
      otherGiven.abort();
      await otherDone;
      answer();
    }
    await other.pending; // the undo ran
    waiterGiven.abort();
    const waiterEnd = await waiterDone;
    await waiter.pending;
    expect({
      waiter: "got" in waiterEnd && !!waiterEnd.got,
      first: await left(permits[0] as string),
      second: await left(permits[1] as string),
    }).toEqual({ waiter: false, first: { held: null, pttl: -2 }, second: { held: null, pttl: -2 } });
  }, 20_000);
});

describe.each(kinds)(
  "S2, %s: a late copy of the try that found its waiter's name spent",
  (_n, make, keyOf) => {
    it("landing before that name's leave, its uuid held for another whose try is undone: not held for nobody", async () => {
      const { passThrough, direct, resending, id, permit, uuid, holder } = await arrange(
        "same-uuid-buried",
        make,
        keyOf,
      );
      const waiter = make(id, resending);
      const waiterGiven = new AbortController();
      const retry = { attempts: 6, delay: 3_000, maxDelay: 3_000 }; // its next try 3 s off
      const waiterDone = outcome(waiter.acquire({ uuid, signal: waiterGiven.signal, retry }));
      await waitUntil(
        async () => (await direct.zcard(companionKey(id, ":queue"))) === 1,
        "the waiter queued",
      );
      await waitUntil(() => notRun() === 0, "its first try ran");
      const sent = passThrough.stats.requests;
      const commands = passThrough.stats.commands;
      // Its next try: the first copy held; the re-sent one finds the name spent; then the spent name's leave
      // and the fresh name's try, both held (in either order).
      const land = passThrough.faults.ghostHeld(1);
      passThrough.faults.delayNext(2, 0);
      const letGo = passThrough.faults.delayHeld(2);
      expect(await holder.release()).toBe(true); // hands the permit to the waiter's name
      const confirming = await make(id, direct).acquireOrThrow({ uuid, retry: { attempts: 1 } });
      expect(await confirming.release()).toBe(true); // buries the waiter's name: the permit free
      expect({ free: await direct.get(permit), before: passThrough.stats.requests - sent }).toEqual({
        free: null,
        before: 0, // none of the waiter's next try yet: the burial came first
      });
      try {
        // Four commands (the two copies, the leave, the fresh try: the last two may share a request), all but
        // the re-sent copy not run.
        const sentSince = () => passThrough.stats.requests - sent;
        await waitUntil(
          () => passThrough.stats.commands - commands === 4 && notRun() === sentSince() - 1,
          "sent",
          { timeoutMs: 10_000 },
        );
        const held = notRun();
        passThrough.faults.reset(); // a hold left unused (the last two shared a request)
        // Another acquisition of the uuid takes the free permit; its caller gives up before the reply comes:
        // its try is undone once answered.
        const other = make(id, clientFor({ url: passThrough.url, token: stack().endpoint.token }));
        const answer = passThrough.faults.delayRepliesHeld(1);
        const otherGiven = new AbortController();
        const otherDone = outcome(other.acquire({ uuid, signal: otherGiven.signal, retry: { attempts: 1 } }));
        try {
          await waitUntil(async () => (await direct.get(permit)) === uuid, "taken by the other");
          await waitUntil(() => notRun() === held, "the other's try ran");
          land();
          await waitUntil(() => notRun() === held - 1, "the late copy ran");
        } finally {
          land();
          otherGiven.abort();
          await otherDone;
          answer();
        }
        await other.pending; // the undo ran
      } finally {
        land();
        waiterGiven.abort();
      }
      const waiterEnd = await waiterDone;
      letGo(); // the spent name's leave, the fresh name's try (undone: its caller gave up)
      await waiter.pending;
      expect({ waiter: "got" in waiterEnd && !!waiterEnd.got, ...(await left(permit)) }).toEqual({
        waiter: false,
        held: null,
        pttl: -2,
      });
    }, 20_000);
  },
);
