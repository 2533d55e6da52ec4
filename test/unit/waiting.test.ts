import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { monotonicNow } from "../../src/clock";
import { pollUntil } from "../../src/waiting";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled after pending microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe("pollUntil", () => {
  it("resolves once the monotonic moment comes, not before, and leaves no timer", async () => {
    const wait = pollUntil(monotonicNow() + 100, undefined, undefined);
    await vi.advanceTimersByTimeAsync(99);
    expect(await settled(wait)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(wait).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  // Review helper-150 (stop 52, 3 of 4 runs): timers fire up to a millisecond early on the monotonic clock, so
  // a covered wait's poll planned for the last try's moment (a poll that is none) sent a try after all.
  it("does not end before the monotonic moment when its timer fires early", async () => {
    const wait = pollUntil(monotonicNow() + 100, undefined, undefined);
    const timersNow = performance.now.bind(performance);
    const behind = vi.spyOn(performance, "now").mockImplementation(() => timersNow() - 2);
    try {
      await vi.advanceTimersByTimeAsync(100); // the timer fires, 2 ms early by the monotonic clock
      expect(await settled(wait)).toBe(false);
      await vi.advanceTimersByTimeAsync(2);
      expect(await settled(wait)).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      behind.mockRestore();
    }
  });

  // Review helper-154: re-armed for as long as the monotonic clock was behind, a wait under fake timers that
  // leave `performance.now` real (as a user's test may) never ended.
  it("ends when its timer fires, if early, under fake timers that leave the monotonic clock real", async () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const wait = pollUntil(monotonicNow() + 100, undefined, undefined);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await settled(wait)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends early when the local wait (a turn, a release here) settles, rejected or not", async () => {
    let end!: () => void;
    const turn = new Promise<void>((resolve) => (end = resolve));
    const wait = pollUntil(monotonicNow() + 1_000, undefined, turn);
    expect(await settled(wait)).toBe(false);
    end();
    expect(await settled(wait)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the signal's reason on abort, and removes its listener", async () => {
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, "removeEventListener");
    const wait = pollUntil(monotonicNow() + 1_000, controller.signal, undefined);
    controller.abort(new Error("caller gave up"));
    await expect(wait).rejects.toThrow("caller gave up");
    expect(remove).toHaveBeenCalledWith("abort", expect.any(Function));
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects at once, with no timer, when the signal is already aborted", async () => {
    const wait = pollUntil(monotonicNow() + 1_000, AbortSignal.abort("late"), undefined);
    await expect(wait).rejects.toBe("late");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets a wake-up end the wait or move its end, and ignores both once it is over", async () => {
    let finish!: () => void;
    let moveTo!: (moment: number) => void;
    const start = monotonicNow();
    const wait = pollUntil(start + 1_000, undefined, undefined, (end, move) => {
      finish = end;
      moveTo = move;
    });
    moveTo(start + 300);
    await vi.advanceTimersByTimeAsync(299);
    expect(await settled(wait)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(wait)).toBe(true);
    moveTo(start + 2_000); // after the end: arms nothing
    finish();
    expect(vi.getTimerCount()).toBe(0);
  });
});
