import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Doorbell, type RetryWindow } from "../../src/wake/doorbell";

/** Retry at once after a release. */
const NOW: RetryWindow = { after: 0, spread: 0 };

// The doorbell's timing, on a fake clock: what a waiting acquisition does with lock events.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Resolves to the fake time at which `wait` settled. */
function settledAt(wait: Promise<void>): Promise<number> {
  return wait.then(() => performance.now());
}

describe("Doorbell", () => {
  it("waits the full time when nothing happens", async () => {
    const start = performance.now();
    const done = settledAt(new Doorbell().wait(1_000, undefined, NOW));
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await done) - start).toBe(1_000);
  });

  it("moveDeadline moves the end of the wait in progress, but not a wake-up a release scheduled", async () => {
    const bell = new Doorbell();
    const start = performance.now();
    const moved = settledAt(bell.wait(100, undefined, { after: 10, spread: 0 }));
    bell.moveDeadline(start + 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await moved) - start).toBe(1_000);

    const woken = settledAt(bell.wait(100, undefined, { after: 10, spread: 0 }));
    bell.ring("released");
    bell.moveDeadline(performance.now() + 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await woken) - start - 1_000).toBe(10);
    // Between waits it does nothing.
    bell.moveDeadline(0);
  });

  it("a release ends the wait within its retry window, no sooner than its start", async () => {
    const bell = new Doorbell();
    const start = performance.now();
    const done = settledAt(bell.wait(1_000, undefined, { after: 10, spread: 30 }));
    await vi.advanceTimersByTimeAsync(100);
    bell.ring("released");
    await vi.advanceTimersByTimeAsync(40);
    const at = (await done) - start;
    expect(at).toBeGreaterThanOrEqual(110);
    expect(at).toBeLessThanOrEqual(140);
  });

  it("an announced acquisition within the spread sends the waiter back to its full wait", async () => {
    const bell = new Doorbell();
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const start = performance.now();
    const done = settledAt(bell.wait(2_000, undefined, { after: 0, spread: 1_000_000 }));
    bell.ring("released");
    await vi.advanceTimersByTimeAsync(10);
    bell.ring("acquired");
    await vi.advanceTimersByTimeAsync(2_000);
    expect((await done) - start).toBe(2_000);
    vi.restoreAllMocks();
  });

  it("remembers a release that came while no one waited, until reset", async () => {
    const bell = new Doorbell();
    bell.ring("released");
    const start = performance.now();
    const first = settledAt(bell.wait(5_000, undefined, NOW));
    await vi.advanceTimersByTimeAsync(0);
    expect((await first) - start).toBe(0);

    bell.reset();
    const again = settledAt(bell.wait(300, undefined, NOW));
    await vi.advanceTimersByTimeAsync(300);
    expect((await again) - start).toBe(300);
  });

  it("a broken subscription counts as a release; abort rejects with the reason", async () => {
    const bell = new Doorbell();
    const start = performance.now();
    const done = settledAt(bell.wait(5_000, undefined, NOW));
    bell.ring("ended");
    await vi.advanceTimersByTimeAsync(0);
    expect((await done) - start).toBe(0);

    const controller = new AbortController();
    const aborted = bell.wait(5_000, controller.signal, NOW);
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
  });

  it("waits longer than a timer can (2^31 - 1 ms) without firing early", async () => {
    const start = performance.now();
    let settled = false;
    const done = settledAt(new Doorbell().wait(2 ** 31 + 5_000, undefined, NOW)).then((at) => {
      settled = true;
      return at;
    });
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await done) - start).toBe(2 ** 31 + 5_000);
  });
});
