// SubscribedWaiter over a scripted subscription (the hub's own code, a fake subscribe): when a wait counts
// itself covered by announcements. Review helper-57 (2026-12-04): a subscription that broke in the one
// microtask between the hub answering the wait's listen and the wait storing the answer was stored, dead,
// and the wait slept to its safety poll, covered by nothing.
import { describe, expect, it, vi } from "vitest";
import { eventChannel } from "../../../src/keys";
import type { AcquirePlan } from "../../../src/options";
import type { ChannelListener } from "../../../src/wake/feed";
import { channelHub } from "../../../src/wake/hub";
import { SubscribedWaiter } from "../../../src/wake/subscribed";
import { pause } from "../../faults/support/time";

const plan = {
  lease: 60_000,
  attempts: 200,
  backoff: { delay: 100, backoff: "fixed", maxDelay: 4_000, jitter: 0 },
  wakeOnRelease: true,
} as unknown as AcquirePlan;

/** A try at `now` that found the lock held (60 s left; the third): what the wait plans next, and spends. */
function refusedAt(waiter: SubscribedWaiter, now: number) {
  waiter.trying(false);
  waiter.answered({ kind: "held", pttl: 60_000 });
  const step = { kind: "held", now, planned: now + 100, cap: now + 60_000, tries: 3, spent: 3 } as const;
  return waiter.next({ ...step, lastTryAt: Number.POSITIVE_INFINITY });
}

/** One refused try, then what the wait plans: its next poll (uncovered), or a safety poll seconds away. */
function plannedAfterRefusal(waiter: SubscribedWaiter): "poll" | "safety poll" {
  const now = performance.now();
  return (refusedAt(waiter, now)?.at ?? 0) > now + 1_000 ? "safety poll" : "poll";
}

async function afterMicrotasks(count: number, run: () => void): Promise<void> {
  for (let tick = 0; tick < count; tick++) await Promise.resolve();
  run();
}

describe("a shared subscription that breaks just after a wait joined it", () => {
  it.each([0, 1, 2, 3, 5, 8])("%i microtasks later: the wait polls, not covered", async (ticks) => {
    const opened: ChannelListener[] = [];
    const hub = channelHub(async (_channel, listener) => {
      opened.push(listener);
      return () => {};
    });
    const key = `broken-${ticks}`;
    const events = hub.lockEvents(key);
    await events.listen(() => {}, new AbortController().signal); // another wait's, active
    const waiter = new SubscribedWaiter(events, plan); // joins it at once
    await afterMicrotasks(ticks, () => opened[0]?.ended());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(hub.active((await eventChannel(key)) as string)).toBe(false);
    expect(plannedAfterRefusal(waiter)).toBe("poll");
    waiter.close();
  });
});

// Review helper-60 (2026-12-04): after a second break of a young subscription, the wait never subscribed
// again, however long it went on (edb3e80 had stopped re-subscribing to bound the bill of a flapping stream).
describe("a subscription that breaks young, twice", () => {
  it("is asked for again once retry.maxDelay has passed, not before", async () => {
    // A frozen clock: each subscription lives 0 ms (young however loaded the machine is), and the moments
    // of the refusals are the ones given. Timers stay real, for the wait below.
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      const opened: ChannelListener[] = [];
      const hub = channelHub(async (_channel, listener) => {
        opened.push(listener);
        return () => {};
      });
      const waiter = new SubscribedWaiter(hub.lockEvents("young-breaks"), plan);
      // A refused try at `now`: whether the wait asks for a subscription then (it spends one command).
      const subscribesAt = (now: number) => refusedAt(waiter, now)?.spent === 1;
      // The channel's name is hashed by Web Crypto before the first subscription: on a loaded machine that
      // takes longer than any fixed pause (stop 55's CI: 5 ms was not enough), so it is waited for. Then one
      // timer turn: the wait stores the confirmed subscription in microtasks (one that breaks before that
      // failed, and is not asked for again).
      const opensUpTo = async (count: number) => {
        const deadline = Date.now() + 10_000;
        while (opened.length < count && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 5));
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(opened).toHaveLength(count);
      };
      const frozen = performance.now();
      expect(subscribesAt(frozen)).toBe(true);
      await opensUpTo(1);
      opened[0]?.ended(); // the first break: asked for again at the next refusal
      expect(subscribesAt(frozen)).toBe(true);
      await opensUpTo(2);
      opened[1]?.ended(); // young again: not before maxDelay
      expect(subscribesAt(frozen)).toBe(false);
      expect(subscribesAt(frozen + plan.backoff.maxDelay - 1)).toBe(false);
      expect(subscribesAt(frozen + plan.backoff.maxDelay + 1)).toBe(true);
      await opensUpTo(3);
      waiter.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

// Review helper-125 (stop 49: 4/4 over @upstash/redis, 3/3 over ioredis): a stream breaking every 2.1 retry
// delays billed about 40 % more than polling. A subscription saves nothing until its covering poll, a delay
// after it is active: to pay for the two commands of the next (its SUBSCRIBE and the covering poll) it must
// live three delays, not two.
// Review helper-188: under exponential backoff polling's waits grow towards maxDelay, so three `retry.delay`s
// of life paid for nothing (a FairLock wait billed 57 commands where polling bills 11). It is three of
// polling's current waits: 3 x 400 ms at the third try here (100 ms doubling), the same as before for fixed.
const exponential = {
  ...plan,
  backoff: { delay: 100, backoff: "exponential", maxDelay: 4_000, jitter: 0 },
} as unknown as AcquirePlan;

describe("a subscription that breaks after it was active a while", () => {
  it.each([
    [250, false, "fixed", plan],
    [300, true, "fixed", plan],
    [300, false, "exponential", exponential],
    [1_150, false, "exponential", exponential],
    [1_200, true, "exponential", exponential],
  ] as const)(
    "active %i ms: asked for again at once: %s (%s, 100 ms)",
    async (lived, atOnce, kind, policy) => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      try {
        const opened: ChannelListener[] = [];
        const hub = channelHub(async (_channel, listener) => {
          opened.push(listener);
          return () => {};
        });
        // Under exponential backoff, a fair waiter: it subscribes at every refusal it may (an unfair one seldom).
        const fair = policy === exponential;
        const waiter = new SubscribedWaiter(hub.lockEvents(`breaks-after-${lived}-${kind}`), policy, fair);
        // The channel's name is hashed by Web Crypto, off the fake clock: real turns (bounded) let it finish.
        const opening = async (count: number) => {
          // By the real clock (a count of turns runs out sooner than hashing on a loaded machine).
          for (const deadline = Date.now() + 10_000; opened.length < count && Date.now() < deadline; )
            await new Promise((resolve) => setImmediate(resolve));
          for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
          expect(opened).toHaveLength(count);
        };
        // A refused try: whether the wait asks for a subscription now (it then spends one command).
        const subscribes = () => refusedAt(waiter, performance.now())?.spent === 1;
        expect(subscribes()).toBe(true);
        await opening(1);
        opened[0]?.ended(); // the first break: asked for again at once, as always
        expect(subscribes()).toBe(true);
        await opening(2);
        await vi.advanceTimersByTimeAsync(lived);
        opened[1]?.ended();
        const again = subscribes();
        await vi.advanceTimersByTimeAsync(plan.backoff.maxDelay);
        const later = again || subscribes();
        expect({ again, later }).toEqual({ again: atOnce, later: true });
        waiter.close();
      } finally {
        vi.useRealTimers();
      }
    },
  );
});

// A release between a held try and the subscription's activation is not heard, and that try is not covered:
// its covering poll went at the next planned poll, `retry.delay` later (review helper-180: a FairLock waiter
// served 5 s late). It now goes once the subscription is active; the safety polls after it stay where they
// were, counted from its planned moment. test/wake/subscription-gap.test.ts covers it over real clients.
describe("a subscription that becomes active after a held try was sent", () => {
  const slow = {
    ...plan,
    backoff: { delay: 1_000, backoff: "fixed", maxDelay: 4_000, jitter: 0 },
  } as unknown as AcquirePlan;

  /** A waiter that asks for a subscription at its first refusal, confirmed when `activate` is called. */
  async function subscribing(key: string, fair = false) {
    let activate = () => {};
    let asked = () => {};
    const opened = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const hub = channelHub(
      () =>
        new Promise((confirm) => {
          activate = () => confirm(() => {});
          asked();
        }),
    );
    const waiter = new SubscribedWaiter(hub.lockEvents(key), slow, fair);
    expect(refusedWith(waiter, performance.now())?.spent).toBe(1); // it asked for the subscription
    await opened; // the channel's name is hashed first (Web Crypto)
    return { waiter, activate };
  }

  /** A try at `now` that found the lock held, with `slow`'s plan; `during` runs while it is in flight. */
  function refusedWith(waiter: SubscribedWaiter, now: number, during?: () => void) {
    waiter.trying(false);
    during?.();
    waiter.answered({ kind: "held", pttl: 600_000 });
    const step = { kind: "held", now, planned: now + 1_000, cap: now + 600_000, tries: 3, spent: 3 } as const;
    return waiter.next({ ...step, lastTryAt: Number.POSITIVE_INFINITY });
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  /** A try that found the lock held, the subscription becoming active while it was out: what comes next. */
  async function activeDuringTry(waiter: SubscribedWaiter, activate: () => void) {
    waiter.trying(false);
    activate();
    await settle();
    waiter.answered({ kind: "held", pttl: 600_000 });
    const now = performance.now();
    const step = { kind: "held", now, planned: now + 1_000, cap: now + 600_000, tries: 4, spent: 5 } as const;
    return { now, next: waiter.next({ ...step, lastTryAt: Number.POSITIVE_INFINITY }) };
  }

  it("while the try is in flight: its covering poll goes at once, the safety poll after it as planned", async () => {
    const { waiter, activate } = await subscribing("active-in-flight");
    const { now, next } = await activeDuringTry(waiter, activate);
    expect(next?.at).toBe(now); // the covering poll, at once rather than at `planned`
    // The covering poll, sent early: the safety poll after it is a maxDelay after its planned moment.
    const covering = refusedWith(waiter, performance.now());
    expect(covering?.at).toBeGreaterThanOrEqual(now + 1_000 + 4_000);
    waiter.close();
  });

  // Review helper-186: counted from the planned moment, a fair waiter's next safety poll could come up to
  // `delay` + `maxDelay` after its last try, past its place in line (`maxDelay` + 2 s after a try): with
  // `delay` above 2 s, a release then handed the lock to the one behind it.
  it("a fair waiter's safety poll after it is a maxDelay after the poll itself: its place in line lives on", async () => {
    const { waiter, activate } = await subscribing("active-in-flight-fair", true);
    const { now, next } = await activeDuringTry(waiter, activate);
    expect(next?.at).toBe(now);
    const covering = refusedWith(waiter, performance.now());
    const sent = performance.now(); // the covering poll went at or before this
    expect(covering?.at).toBeLessThanOrEqual(sent + 4_000);
    expect(covering?.at).toBeGreaterThanOrEqual(now + 4_000);
    waiter.close();
  });

  it("while the wait after it is in progress: the wait ends at once", async () => {
    const { waiter, activate } = await subscribing("active-while-waiting");
    const stop = new AbortController();
    // Planned to end 10 minutes on: only the activation can end it before a plain 10 s timer started beside
    // it (late alike on a loaded machine). The signal ends a wait the activation did not.
    const waiting = waiter.wait(performance.now() + 600_000, stop.signal, undefined);
    activate();
    const timer = new AbortController();
    try {
      const first = await Promise.race([
        waiting.then(() => "ended" as const),
        pause(10_000, "timer first" as const, { signal: timer.signal }),
      ]);
      expect(first).toBe("ended");
    } finally {
      timer.abort();
      stop.abort();
      await waiting.catch(() => undefined);
      waiter.close();
    }
  });
});
