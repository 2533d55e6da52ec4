// Review helper-201 (helper-144's B1): a fair waiter with a `uuid` was handed the permit by a release; another
// acquisition of the same uuid confirmed that hold and released it, which buried the waiter's name in line
// (its tries' late copies must take nothing). Nothing held the permit then, yet every later try of the live
// waiter was refused as a late copy: it failed "held" with the permit free. Told its name is spent, it takes a
// fresh one and goes on as a new waiter.
import { describe, expect, it } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { now, waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

function counts(): { ran: number; requests: number } {
  return { ran: wire().passThrough.ran(), requests: wire().passThrough.stats.requests };
}

/** Requests that reached the pass-through since `since` and have not run in Redis (yet). */
function notRun(since: { ran: number; requests: number }): number {
  const { passThrough } = wire();
  return passThrough.stats.requests - since.requests - (passThrough.ran() - since.ran);
}

/**
 * A client whose answered scripts are noted: the waiter's tries (a middleware: @upstash/redis's auto-pipelining
 * proxy calls no `eval` of the instance).
 */
function answeringClient(endpoint = stack().endpoint): {
  redis: ReturnType<typeof clientFor>;
  lastAnswerAt: () => number;
} {
  const redis = clientFor(endpoint);
  let lastAnswerAt = Number.NEGATIVE_INFINITY;
  (
    redis as unknown as {
      use(
        middleware: (
          request: { body?: unknown },
          next: (request: unknown) => Promise<unknown>,
        ) => Promise<unknown>,
      ): void;
    }
  ).use(async (request, next) => {
    const reply = await next(request);
    if (/"eval(sha)?"/i.test(JSON.stringify(request.body ?? null))) lastAnswerAt = now();
    return reply;
  });
  return { redis, lastAnswerAt: () => lastAnswerAt };
}

interface Taker {
  acquireOrThrow(config?: object): Promise<{ release(): Promise<boolean> }>;
  acquire(config?: object): Promise<unknown>;
  readonly pending: Promise<void>;
}

// With 2 attempts the burial comes between the first try (which queued the waiter) and the last, which then
// finds the name spent (review helper-206).
const cases = [
  ["a Semaphore", "on the same instance", 5],
  ["a Semaphore", "on another instance", 5],
  ["a FairLock", "on another instance", 5],
  ["a Semaphore", "on the same instance", 2],
  ["a Semaphore", "on another instance", 2],
  ["a FairLock", "on another instance", 2],
] as const;

describe("a fair waiter with a uuid, whose handed permit another acquisition of the uuid released", () => {
  it.each(cases)(
    "takes the free permit: %s, the other acquisition %s, with %i attempts",
    async (kind, where, attempts) => {
      const id = uniqueId("buried-waiter-free");
      const redis = wire().direct;
      const options = { id, redis, lease: 5_000, wakeOnRelease: false } as const;
      const make = (client = redis): Taker =>
        kind === "a Semaphore"
          ? new Semaphore({ ...options, redis: client, limit: 1, fair: true })
          : new FairLock({ ...options, redis: client });
      const permit = kind === "a Semaphore" ? `{${id}}:permit:1` : id;
      const waiter = answeringClient();
      const holder = make();
      const here = make(waiter.redis);
      const rerun = where === "on the same instance" ? here : make();
      const uuid = crypto.randomUUID();
      const first = await holder.acquireOrThrow();
      const waiting = here.acquireOrThrow({ uuid, retry: { attempts, delay: 1_000 } }).then(
        (lease) => ({ lease }),
        (error: unknown) => ({ error }),
      );
      await waitUntil(async () => (await redis.zcard(companionKey(id, ":queue"))) === 1, "queued");
      // Right after a try of the waiter was answered: its next is 1 s away, so the release and the burial
      // below come before it (a try of its own in between would take the handed permit itself).
      // With 2, the first (which queued it): a later one would be its last.
      const queuedAt = attempts === 2 ? Number.NEGATIVE_INFINITY : now();
      await waitUntil(() => waiter.lastAnswerAt() > queuedAt, "a try of the waiter answered", {
        timeoutMs: 5_000,
      });
      expect(await first.release()).toBe(true); // hands the permit to the waiter's name in line
      const confirming = await rerun.acquireOrThrow({ uuid, retry: { attempts: 1 } });
      expect(await confirming.release()).toBe(true); // buries the waiter's name
      const freed = await redis.get(permit);
      const waited = await waiting;
      const held = await redis.get(permit);
      expect({ freed, waiter: "lease" in waited ? "acquired" : waited.error, held }).toEqual({
        freed: null,
        waiter: "acquired",
        held: uuid,
      });
      if ("lease" in waited) expect(await waited.lease.release()).toBe(true);
      await rerun.pending;
      await here.pending;
      await holder.pending;
    },
    20_000,
  );
});

describe("a late copy of the try that found a fair waiter's name spent", () => {
  it("confirms no newer hold of its uuid, whose try is then undone: nothing stays held for nobody", async () => {
    const { passThrough, direct } = wire();
    const { token } = stack().endpoint;
    // Re-sends a request whose connection broke.
    const { redis: resending, lastAnswerAt } = answeringClient({ url: passThrough.url, token });
    const id = uniqueId("buried-waiter-free-copy");
    const options = { id, lease: 10_000, limit: 1, fair: true, wakeOnRelease: false } as const;
    const permit = `{${id}}:permit:1`;
    const holder = await new Semaphore({ ...options, redis: direct }).acquireOrThrow();
    const waiting = new Semaphore({ ...options, redis: resending });
    const warm = new Semaphore({ ...options, id: uniqueId("buried-waiter-free-warm"), redis: resending });
    await (await warm.acquireOrThrow()).release(); // the scripts are cached: the next try is one request
    const uuid = crypto.randomUUID();
    const acquiring = waiting.acquireOrThrow({ uuid, retry: { attempts: 6, delay: 1_000 } }).then(
      (lease) => ({ lease }),
      (error: unknown) => ({ error }),
    );
    await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
    const queuedAt = now(); // as above: the next try of the waiter comes 1 s after this one's answer
    await waitUntil(() => lastAnswerAt() > queuedAt, "a try of the waiter answered", { timeoutMs: 5_000 });
    expect(await holder.release()).toBe(true); // hands the permit to the waiter's name in line
    const rerun = new Semaphore({ ...options, redis: direct });
    expect(await (await rerun.acquireOrThrow({ uuid, retry: { attempts: 1 } })).release()).toBe(true);
    const since = counts();
    // The waiter's next try: its first copy is held until the test lets it go; the re-sent one finds the
    // waiter's name spent.
    const land = passThrough.faults.ghostHeld(1);
    const waited = await acquiring;
    await waiting.pending;
    expect({ waiter: "lease" in waited ? "acquired" : waited.error, late: notRun(since) }).toEqual({
      waiter: "acquired",
      late: 1,
    });
    if ("lease" in waited) expect(await waited.lease.release()).toBe(true);
    await waiting.pending;
    // Another process takes the uuid anew; its caller gives up before the reply comes: its try is undone.
    const other = new Semaphore({ ...options, redis: clientFor({ url: passThrough.url, token }) });
    const answer = passThrough.faults.delayRepliesHeld(1);
    const controller = new AbortController();
    const given = other.acquire({ uuid, retry: { attempts: 1 }, signal: controller.signal }).catch((e) => e);
    try {
      await waitUntil(async () => (await direct.get(permit)) === uuid, "taken anew");
      land();
      await waitUntil(() => notRun(since) <= 0, "the late copy ran", { timeoutMs: 10_000 });
    } finally {
      land();
      controller.abort();
      await given;
      answer(); // the caller gave up first: the try is undone once answered
    }
    await other.pending; // the undo ran
    const next = await new Semaphore({ ...options, redis: direct }).acquire({ retry: { attempts: 1 } });
    expect({ nextTook: next !== undefined }).toEqual({ nextTook: true });
    await next?.release();
  }, 30_000);
});
