// One holding's local life, on a fake clock against a scripted store: its deadline, its signal,
// its renewals and its release. The real stores run in test/lock and test/faults.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LockLostError } from "../../src/errors";
import { Lease, type LeaseContext } from "../../src/lease";
import type { LockStore, Observation } from "../../src/store";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store that answers renewals as `held()` says, after `rtt` ms, and counts what it is asked. */
function scriptedStore(held: () => boolean = () => true, rtt = 5) {
  const calls = { renew: 0, release: 0, extend: 0, status: 0 };
  const answer = (value: Observation): Promise<Observation> =>
    new Promise((resolve) => setTimeout(() => resolve(value), rtt));
  const store = {
    take: async () => ({ kind: "held", pttl: -1 }),
    undo: async () => {},
    renew: (_token: string, lease: number) => {
      calls.renew += 1;
      return answer(held() ? { held: true, pttl: lease } : { held: false, pttl: -2 });
    },
    status: () => {
      calls.status += 1;
      return answer(held() ? { held: true, pttl: 800 } : { held: false, pttl: -2 });
    },
    extend: (_token: string, amount: number) => {
      calls.extend += 1;
      return answer(held() ? { held: true, pttl: 1_000 + amount } : { held: false, pttl: -2 });
    },
    release: () => {
      calls.release += 1;
      return new Promise<boolean>((resolve) => setTimeout(() => resolve(held()), rtt));
    },
  } satisfies LockStore;
  return { store, calls };
}

function lease(store: LockStore, overrides: Partial<LeaseContext> = {}, pttl = 1_000): Lease {
  const context: LeaseContext = {
    lockId: "id",
    store,
    token: "t",
    permit: 1,
    lease: 1_000,
    renewInterval: undefined,
    onLost: undefined,
    background: () => {},
    ...overrides,
  };
  return new Lease(context, { sentAt: performance.now(), pttl, fencingToken: 7, hold: "try" });
}

describe("the local deadline", () => {
  it("counts down from the lease confirmed as the request was sent, less the drift allowance", async () => {
    const held = lease(scriptedStore().store);
    expect(held.remainingMs).toBe(1_000 - 12);
    await vi.advanceTimersByTimeAsync(400);
    expect(held.remainingMs).toBe(588);
    expect(held.fencingToken).toBe(7);
  });

  it("without auto-extend, the signal aborts with reason expired when it passes, and onLost is called once", async () => {
    const onLost = vi.fn();
    const held = lease(scriptedStore().store, { onLost });
    const signal = held.signal;
    await vi.advanceTimersByTimeAsync(988);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).reason).toBe("expired");
    expect((signal.reason as LockLostError).message).toMatch(/its lease ran out/);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(held.remainingMs).toBe(0);
  });

  it("a lease longer than a timer can hold is not reported lost early", async () => {
    const huge = 2 ** 33;
    const held = lease(scriptedStore().store, { lease: huge }, huge);
    const signal = held.signal;
    await vi.advanceTimersByTimeAsync(2 ** 31 + 1_000);
    expect(signal.aborted).toBe(false);
    expect(held.remainingMs).toBeGreaterThan(2 ** 32);
  });

  it("an onLost that throws or rejects is contained", async () => {
    const throwing = lease(scriptedStore().store, {
      onLost: () => {
        throw new Error("handler bug");
      },
    });
    const rejecting = lease(scriptedStore().store, {
      onLost: async () => Promise.reject(new Error("async bug")),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(throwing.signal.aborted && rejecting.signal.aborted).toBe(true);
  });
});

describe("auto-extend", () => {
  it("renews every interval, counted from each renewal's send, and keeps the lease alive", async () => {
    const { store, calls } = scriptedStore();
    const held = lease(store, { renewInterval: 300 });
    const signal = held.signal;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls.renew).toBe(10);
    expect(signal.aborted).toBe(false);
    expect(held.remainingMs).toBeGreaterThan(600);
  });

  it("a renewal that finds another owner aborts with reason taken, and renewals stop", async () => {
    let mine = true;
    const { store, calls } = scriptedStore(() => mine);
    const held = lease(store, { renewInterval: 300 });
    const signal = held.signal;
    await vi.advanceTimersByTimeAsync(400);
    mine = false;
    await vi.advanceTimersByTimeAsync(400);
    expect((signal.reason as LockLostError).reason).toBe("taken");
    const renewals = calls.renew;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls.renew).toBe(renewals);
    expect(await held.release()).toBe(false);
    expect(calls.release).toBe(0);
  });

  it("a short grant is topped up to the lease halfway through, without auto-extend", async () => {
    const { store, calls } = scriptedStore();
    const held = lease(store, {}, 400);
    await vi.advanceTimersByTimeAsync(250);
    expect(calls.renew).toBe(1);
    expect(held.remainingMs).toBeGreaterThan(700);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls.renew).toBe(1);
  });
});

describe("a renewal answered after its patience ran out", () => {
  // Renewal 1 goes at 300 ms; its patience is two thirds of the 688 ms left (458 ms), so a retry is queued at
  // 758 ms for 833 ms. The answer lands at 800 ms: it is the chain's answer, as if it had come in time.
  function lateFirstRenewal(first: Observation) {
    const renewals: number[] = [];
    const store = {
      ...scriptedStore().store,
      renew: (_token: string, lease: number) => {
        renewals.push(performance.now());
        const answer = renewals.length === 1 ? first : { held: true, pttl: lease };
        const rtt = renewals.length === 1 ? 500 : 5;
        return new Promise<Observation>((resolve) => setTimeout(() => resolve(answer), rtt));
      },
    } satisfies LockStore;
    return { store, renewals };
  }

  it("that says taken ends the lease at once, and the queued retry is never sent", async () => {
    const { store, renewals } = lateFirstRenewal({ held: false, pttl: -2 });
    const onLost = vi.fn();
    lease(store, { renewInterval: 300, onLost });
    await vi.advanceTimersByTimeAsync(801);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost.mock.calls[0]?.[0]).toMatchObject({ reason: "taken" });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renewals).toHaveLength(1);
  });

  it("that says held goes on with one chain: no second renewal for the queued retry", async () => {
    const { store, renewals } = lateFirstRenewal({ held: true, pttl: 1_000 });
    const held = lease(store, { renewInterval: 300 });
    await vi.advanceTimersByTimeAsync(2_000);
    // 300 (late); due since 600, the next goes on the answer at 800 (a timer due now fires a ms later), then
    // every 300 ms from each send. Two chains would also send the retry queued for 833.
    expect(renewals).toEqual([300, 801, 1_101, 1_401, 1_701]);
    expect(held.remainingMs).toBeGreaterThan(600);
  });
});

describe("a renewal due after a stall past the deadline", () => {
  it("sends nothing: the lease is lost as expired first", async () => {
    const { store, calls } = scriptedStore();
    const onLost = vi.fn();
    lease(store, { renewInterval: 300, onLost });
    const clock = performance.now.bind(performance);
    // The process stalls 5 s (a long GC pause, a frozen VM) just before the renewal is due.
    vi.spyOn(performance, "now").mockImplementation(() => clock() + 5_000);
    await vi.advanceTimersByTimeAsync(300);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(calls.renew).toBe(0);
    vi.restoreAllMocks();
  });
});

describe("a short grant read late", () => {
  // A fair grant counts from the refused try's send, which may lie long before it is read: the top-up must
  // come halfway to the deadline, not half a grant after reading it (past the deadline here).
  it("is topped up halfway between the send it counts from and its end, and holds on", async () => {
    const { store, calls } = scriptedStore();
    const onLost = vi.fn();
    const context: LeaseContext = {
      ...{ lockId: "id", store, token: "t", permit: 1, lease: 1_000, renewInterval: undefined },
      ...{ onLost, background: () => {} },
    };
    const held = new Lease(context, {
      sentAt: performance.now() - 300,
      pttl: 400,
      fencingToken: undefined,
      hold: "try",
    });
    expect(held.remainingMs).toBe(400 - 6 - 300);
    await vi.advanceTimersByTimeAsync(20);
    expect(calls.renew).toBe(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(onLost).not.toHaveBeenCalled();
    expect(held.remainingMs).toBeGreaterThan(700);
  });
});

describe("release", () => {
  it("stops renewals, never aborts a signal read during the hold, and answers false the second time without a request", async () => {
    const { store, calls } = scriptedStore();
    const held = lease(store, { renewInterval: 300 });
    const signal = held.signal;
    const releasing = held.release();
    await vi.advanceTimersByTimeAsync(5);
    expect(await releasing).toBe(true);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls.renew).toBe(0);
    expect(signal.aborted).toBe(false);
    expect(held.remainingMs).toBe(0);
    expect(await held.release()).toBe(false);
    expect(calls.release).toBe(1);
  });

  it("one that gets no answer before the lease runs out resolves false and finishes in the background", async () => {
    const background: Promise<unknown>[] = [];
    const { store } = scriptedStore(() => true, 5_000);
    const held = lease(store, { background: (work) => background.push(work) });
    const releasing = held.release();
    await vi.advanceTimersByTimeAsync(1_001); // the lease, and the turn after it (`within`)
    expect(await releasing).toBe(false);
    expect(background).toHaveLength(1);
  });

  it("await using releases and never throws", async () => {
    const { store, calls } = scriptedStore();
    store.release = () => Promise.reject(new Error("unreachable"));
    const held = lease(store);
    await expect(held[Symbol.asyncDispose]()).resolves.toBeUndefined();
    expect(calls.release).toBe(0);
  });
});

describe("extend and getStatus", () => {
  it("confirm the hold and move the deadline; a false one ends it as taken", async () => {
    let mine = true;
    const { store } = scriptedStore(() => mine);
    const held = lease(store);
    const signal = held.signal;
    const extending = held.extend(2_000);
    await vi.advanceTimersByTimeAsync(5);
    expect(await extending).toBe(true);
    expect(held.remainingMs).toBeGreaterThan(2_000);
    mine = false;
    const status = held.getStatus();
    await vi.advanceTimersByTimeAsync(5);
    expect(await status).toBe("FREE");
    expect((signal.reason as LockLostError).reason).toBe("taken");
  });

  it("a token acquired elsewhere holds from its first confirmation", async () => {
    const { store } = scriptedStore();
    const context = {
      lockId: "id",
      store,
      token: "t",
      permit: undefined,
      lease: 1_000,
      renewInterval: undefined,
      onLost: undefined,
      background: () => {},
    };
    const seeded = new Lease(context, undefined);
    expect(seeded.remainingMs).toBe(0);
    expect(seeded.signal.aborted).toBe(false);
    const status = seeded.getStatus();
    await vi.advanceTimersByTimeAsync(5);
    expect(await status).toBe("ACQUIRED");
    expect(seeded.remainingMs).toBeGreaterThan(700);
  });
});
