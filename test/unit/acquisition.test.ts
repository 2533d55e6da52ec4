// The acquire loop's decisions, on a fake clock against a scripted store: when it tries, when it
// subscribes to the lock's announcements and when it stops, and what a call costs. The real store
// and clients run in test/lock and test/clients; this pins down the policy.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type AcquireOutcome, Acquisition, type AcquisitionContext } from "../../src/acquisition";
import { monotonicNow } from "../../src/clock";
import { resolveAcquirePlan, resolveLockSettings } from "../../src/options";
import type { AttemptResult, LockStore, QueueTicket } from "../../src/store/lock-store";
import type { LockAcquireConfig, LockCreateConfig } from "../../src/types";
import type { FeedEvent } from "../../src/wake/feed-types";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const ROUND_TRIP_MS = 4;
const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/** A store whose lock another owner holds, as `holderAt(ms)` says; it records what it was asked. */
class ScriptedStore implements LockStore {
  readonly canListen = true;
  fair = false;
  readonly left: string[] = [];
  readonly tries: number[] = [];
  subscriptions = 0;
  unsubscriptions = 0;
  #listener: ((event: FeedEvent) => void) | undefined;
  readonly #started = performance.now();

  /** @param holderAt the holder's fingerprint at a time (ms since the store was made), undefined when free. */
  constructor(readonly holderAt: (ms: number) => number | undefined) {}

  attempt(..._args: Parameters<LockStore["attempt"]>): Promise<AttemptResult> {
    const at = performance.now() - this.#started;
    this.tries.push(Math.round(at));
    const holder = this.holderAt(at);
    return this.#reply(
      holder === undefined
        ? { kind: "acquired", fencingToken: undefined }
        : { kind: "held", pttl: 9_000, holder },
    );
  }

  /** Whether a subscription is already active (lingering after an earlier wait of the process). */
  lingering = false;

  listenForEvents(onEvent: (event: FeedEvent) => void, _signal?: AbortSignal, replaySince?: number) {
    this.subscriptions += 1;
    this.#listener = onEvent;
    if (this.lingering) {
      const coveredFrom = replaySince ?? monotonicNow();
      return Promise.resolve({ stop: () => {}, coveredFrom });
    }
    const stop = () => {
      this.unsubscriptions += 1;
      this.#listener = undefined;
    };
    // A fresh subscription: it covers events from the moment it is active.
    return this.#reply(undefined).then(() => ({ stop, coveredFrom: monotonicNow() }));
  }

  /** Announces an event to the subscribed waiter, if any. */
  announce(event: FeedEvent): void {
    this.#listener?.(event);
  }

  #reply<T>(value: T): Promise<T> {
    return new Promise((resolve) => setTimeout(() => resolve(value), ROUND_TRIP_MS));
  }

  async leaveQueue(token: string): Promise<void> {
    this.left.push(token);
  }

  release = async () => true;
  extend = async () => ({ held: true, pttl: 1 });
  status = async () => ({ held: true, pttl: 1 });
  renew = async () => ({ held: true, pttl: 1 });
}

const untouchable = { eval: () => Promise.reject(new Error("no request in unit tests")) };

function plan(config: LockAcquireConfig = {}, lock: Partial<LockCreateConfig> = {}) {
  return resolveAcquirePlan(config, resolveLockSettings({ id: "unit", redis: untouchable, ...lock }));
}

function context(store: LockStore, busy = { until: 0 }) {
  const cleanedUp: string[] = [];
  const value: AcquisitionContext = {
    store,
    cleanUp: async (token) => {
      cleanedUp.push(token);
    },
    leaveQueue: (token) => store.leaveQueue(token, true),
    background: () => {},
    busy,
  };
  return { value, cleanedUp };
}

/** Runs an acquisition to its end on the fake clock. */
async function run(acquisition: Acquisition, untilMs = 60_000): Promise<AcquireOutcome> {
  const outcome = acquisition.run();
  await vi.advanceTimersByTimeAsync(untilMs);
  return outcome;
}

describe("with the defaults (3 attempts, 100 ms)", () => {
  it("tries three times, 100 ms apart, and never subscribes: 3 requests, like 0.2", async () => {
    const store = new ScriptedStore(() => 1);
    const outcome = await run(new Acquisition(context(store).value, plan(), "t"));
    expect(outcome).toMatchObject({ acquired: false, attempts: 3, reason: "held" });
    expect(store.tries).toEqual([0, 104, 208]);
    expect(store.subscriptions).toBe(0);
  });
});

describe("a long wait", () => {
  const long = { retry: { attempts: 50, delay: 100 } };

  it("subscribes once three tries found the same holder, and counts the subscription as an attempt", async () => {
    const store = new ScriptedStore(() => 7);
    const outcome = await run(new Acquisition(context(store).value, plan(long), "t"));
    expect(store.subscriptions).toBe(1);
    expect(outcome.acquired).toBe(false);
    // Tries plus the subscription never exceed the attempts, and polling every maxDelay (1 s) over
    // the 4.9 s schedule leaves far fewer tries than the 50 of polling.
    expect(store.tries.length + store.subscriptions).toBeLessThanOrEqual(50);
    expect(store.tries.length).toBeLessThanOrEqual(12);
    expect(store.unsubscriptions).toBe(1);
  });

  it("never subscribes while the holder changes between tries: the lock changes hands faster than polls", async () => {
    const store = new ScriptedStore((ms) => Math.floor(ms / 50));
    const outcome = await run(new Acquisition(context(store).value, plan(long), "t"));
    expect(outcome).toMatchObject({ acquired: false, attempts: 50 });
    expect(store.subscriptions).toBe(0);
  });

  it("a release announcement ends the wait within a few round trips, long before the next poll", async () => {
    let releasedAt = Number.POSITIVE_INFINITY;
    const store = new ScriptedStore((ms) => (ms < releasedAt ? 7 : undefined));
    const outcome = new Acquisition(context(store).value, plan(long), "t").run();
    await vi.advanceTimersByTimeAsync(2_000);
    releasedAt = 2_000;
    store.announce("released");
    await vi.advanceTimersByTimeAsync(50);
    expect(await outcome).toMatchObject({ acquired: true });
    const lastTry = store.tries.at(-1) as number;
    // Retried from one round trip after the release, over three more at most.
    expect(lastTry).toBeGreaterThanOrEqual(2_000 + ROUND_TRIP_MS);
    expect(lastTry).toBeLessThanOrEqual(2_000 + 4 * ROUND_TRIP_MS);
  });

  it("an announced acquisition sends woken waiters back to waiting before they try", async () => {
    const store = new ScriptedStore(() => 7);
    const outcome = new Acquisition(context(store).value, plan(long), "t").run();
    await vi.advanceTimersByTimeAsync(2_000);
    const before = store.tries.length;
    store.announce("released");
    store.announce("acquired");
    await vi.advanceTimersByTimeAsync(50);
    expect(store.tries.length).toBe(before);
    await vi.advanceTimersByTimeAsync(60_000);
    await outcome;
  });

  it("drops the subscription when releases come faster than polls, and the lock's next waits poll", async () => {
    const store = new ScriptedStore(() => 7);
    const busy = { until: 0 };
    const outcome = new Acquisition(context(store, busy).value, plan(long), "t").run();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.subscriptions).toBe(1);
    // The lock changes hands every 20 ms from now on, five times per 100 ms poll.
    for (let release = 0; release < 60; release++) {
      store.announce("released");
      store.announce("acquired");
      await vi.advanceTimersByTimeAsync(20);
    }
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.unsubscriptions).toBe(1);
    expect(busy.until).toBeGreaterThan(performance.now());
    // A next wait on the same lock, within the memory (10 × maxDelay): it polls without subscribing.
    const next = new ScriptedStore(() => 7);
    const nextOutcome = run(
      new Acquisition(context(next, busy).value, plan({ retry: { attempts: 10, delay: 100 } }), "t"),
    );
    await vi.advanceTimersByTimeAsync(60_000);
    await Promise.all([outcome, nextOutcome]);
    expect(next.tries).toHaveLength(10);
    expect(next.subscriptions).toBe(0);
  });
});

describe("a timeout bounds the whole call", () => {
  it("sends the last try a round trip before the end, and settles by the end", async () => {
    const store = new ScriptedStore(() => 1);
    const acquisition = new Acquisition(
      context(store).value,
      plan({ timeout: 500, retry: { delay: 100 }, wakeOnRelease: false }),
      "t",
    );
    const started = performance.now();
    const outcome = await run(acquisition, 1_000);
    expect(outcome).toMatchObject({ acquired: false, reason: "timeout" });
    expect(outcome.elapsedMs).toBeLessThanOrEqual(500);
    expect(store.tries.at(-1)).toBeLessThanOrEqual(500 - ROUND_TRIP_MS);
    expect(performance.now() - started).toBeGreaterThan(0);
  });

  it("abandons a request in flight at the end; if it took the lock, it is released", async () => {
    class SlowStore extends ScriptedStore {
      override attempt(): Promise<AttemptResult> {
        this.tries.push(Math.round(performance.now()));
        return new Promise((resolve) =>
          setTimeout(() => resolve({ kind: "acquired", fencingToken: undefined }), 800),
        );
      }
    }
    const { value, cleanedUp } = context(new SlowStore(() => undefined));
    const outcome = new Acquisition(value, plan({ timeout: 300 }), "the-token").run();
    await vi.advanceTimersByTimeAsync(300);
    expect(await outcome).toMatchObject({ acquired: false, reason: "timeout", attempts: 1 });
    expect(cleanedUp).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(cleanedUp).toEqual(["the-token"]);
  });
});

describe("a fair wait", () => {
  /** A fair store: the caller is `ahead` places from the front, at place `place` in line. */
  class QueueStore extends ScriptedStore {
    override fair = true;
    ahead = 2;
    place = 41;
    readonly tickets: (QueueTicket | undefined)[] = [];
    override attempt(...args: Parameters<LockStore["attempt"]>): Promise<AttemptResult> {
      this.tickets.push(args[3]);
      return super
        .attempt(...args)
        .then((result) =>
          result.kind === "held" ? { ...result, ahead: this.ahead, place: this.place } : result,
        );
    }
  }

  it("subscribes after its first try, and wakes at once for its own turn only", async () => {
    let free = false;
    const store = new QueueStore(() => (free ? undefined : 7));
    const outcome = new Acquisition(
      context(store).value,
      plan({ retry: { attempts: 50, delay: 100 } }),
      "t",
    ).run();
    await vi.advanceTimersByTimeAsync(300);
    expect(store.subscriptions).toBe(1);
    const tries = store.tries.length;
    const lastTryAt = store.tries.at(-1) as number;
    // Releases and the lock handed to other waiters do not wake a waiter that is not first in line.
    store.announce("released");
    store.announce(`granted:${sha1("someone else")}:41:3000`);
    await vi.advanceTimersByTimeAsync(50);
    expect(store.tries.length).toBe(tries);
    // Handed to this waiter (named by its token's SHA-1): it holds at once, with no request of its
    // own, for the grant counted from its last refused try.
    free = true;
    store.announce(`granted:${sha1("t")}:41:3000`);
    await vi.advanceTimersByTimeAsync(1);
    const acquired = await outcome;
    expect(store.tries.length).toBe(tries);
    expect(acquired).toMatchObject({ acquired: true, pttl: 3_000 });
    expect(acquired.acquired && acquired.sentAt).toBeLessThanOrEqual(lastTryAt);
  });

  it("on a subscription that was already active, covers its first try: no poll before its turn", async () => {
    for (const lingering of [false, true]) {
      let free = false;
      const store = new QueueStore(() => (free ? undefined : 7));
      store.lingering = lingering;
      const outcome = new Acquisition(
        context(store).value,
        plan({ retry: { attempts: 50, delay: 100 } }),
        "t",
      ).run();
      await vi.advanceTimersByTimeAsync(900);
      // A new subscription, active after the first try was sent, needs one poll to cover the moments
      // before; one already active replays them, so the waiter sleeps until its turn (or maxDelay).
      expect(store.tries.length).toBe(lingering ? 1 : 2);
      free = true;
      store.announce(`granted:${sha1("t")}:41:3000`);
      await vi.advanceTimersByTimeAsync(1);
      expect(await outcome).toMatchObject({ acquired: true, pttl: 3_000 });
    }
  });

  it("does not trust a grant read late, for an earlier stay in line: a try checks it", async () => {
    let free = false;
    const store = new QueueStore(() => (free ? undefined : 7));
    const outcome = new Acquisition(
      context(store).value,
      plan({ retry: { attempts: 50, delay: 100 } }),
      "t",
    ).run();
    await vi.advanceTimersByTimeAsync(300);
    const tries = store.tries.length;
    // A grant to the same token at place 40: this waiter (or an earlier acquire with its token) took
    // that permit by a try and queued again at 41. Holding on its word would make two holders.
    store.announce(`granted:${sha1("t")}:40:3000`);
    await vi.advanceTimersByTimeAsync(ROUND_TRIP_MS + 1);
    expect(store.tries.length).toBe(tries + 1);
    // Still waiting: the try found the lock held.
    free = true;
    store.announce(`granted:${sha1("t")}:41:3000`);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toMatchObject({ acquired: true, pttl: 3_000 });
    expect(store.tries.length).toBe(tries + 1);
  });

  it("with fencing, a grant is confirmed by a try of its own, which issues the token", async () => {
    let free = false;
    const store = new QueueStore(() => (free ? undefined : 7));
    const outcome = new Acquisition(
      context(store).value,
      plan({ retry: { attempts: 50, delay: 100 }, fencing: true }),
      "t",
    ).run();
    await vi.advanceTimersByTimeAsync(300);
    const tries = store.tries.length;
    free = true;
    store.announce(`granted:${sha1("t")}:41:3000`);
    await vi.advanceTimersByTimeAsync(ROUND_TRIP_MS + 1);
    expect(store.tries.length).toBe(tries + 1);
    expect(await outcome).toMatchObject({ acquired: true, pttl: 10_000 });
  });

  it("tells the queue how long its place stays, and takes it out of line on its last try", async () => {
    const store = new QueueStore(() => 7);
    const running = new Acquisition(
      context(store).value,
      plan({ retry: { attempts: 3, delay: 100 }, wakeOnRelease: false }),
      "t",
    ).run();
    await vi.advanceTimersByTimeAsync(1_000);
    const outcome = await running;
    expect(outcome).toMatchObject({ acquired: false, attempts: 3 });
    expect(store.tickets.map((ticket) => ticket?.lastTry)).toEqual([false, false, true]);
    // The longest wait between tries (maxDelay, 10 × delay) plus a 2 s margin.
    expect(store.tickets[0]?.entryTtl).toBe(1_000 + 2_000);
    expect(store.left).toEqual([]);
  });

  it("gives its place up when it stops waiting early", async () => {
    const store = new QueueStore(() => 7);
    const controller = new AbortController();
    const outcome = new Acquisition(
      context(store).value,
      plan({ retry: { attempts: 50, delay: 100 }, signal: controller.signal }),
      "the-token",
    ).run();
    await vi.advanceTimersByTimeAsync(250);
    controller.abort(new Error("gone"));
    await expect(outcome).rejects.toThrow("gone");
    await vi.advanceTimersByTimeAsync(10);
    expect(store.left).toEqual(["the-token"]);
  });
});
