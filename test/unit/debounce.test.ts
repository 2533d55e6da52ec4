import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Debounce, LockRedisError } from "../../src/index";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A client whose requests Redis never answers (frozen, or a black-holed connection with no timeout). */
const silent = { eval: () => new Promise<never>(() => {}) };

describe("Debounce.call bounds", () => {
  it("gives up on a request once the counter it asks about would have expired (wait + 60 s)", async () => {
    // Review helper-32: a frozen Redis kept call() pending for as long as the freeze lasted, unbounded.
    const debounce = new Debounce({ id: "d", redis: silent, wait: 500, callback: () => {} });
    const call = debounce.call();
    const failure = expect(call).rejects.toSatisfy(
      (error) =>
        error instanceof LockRedisError &&
        error.operation === "debounce" &&
        error.reason === "Redis did not answer (no reply within 60500 ms)",
    );
    await vi.advanceTimersByTimeAsync(60_499);
    expect(vi.getTimerCount()).toBe(1); // still waiting
    await vi.advanceTimersByTimeAsync(1);
    await failure;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("bounds the check by what is left of the counter's life since the count was sent, not a life of its own", async () => {
    // Review helper-96: a check answered after the keys expired found no count and read "another call
    // came" (false, nothing run), though Redis had only been silent (a freeze of 60 s to `wait` + 60 s).
    const counted = {
      eval: async (script: string) => (script.includes("INCR") ? 1 : new Promise<never>(() => {})),
    };
    const debounce = new Debounce({ id: "d", redis: counted, wait: 500, callback: () => {} });
    const call = debounce.call();
    // The keys live 60 500 ms from the count (sent at 0), of which 1 % + 2 ms is kept for clock drift.
    const failure = expect(call).rejects.toSatisfy(
      (error) =>
        error instanceof LockRedisError && error.reason === "Redis did not answer (no reply within 59393 ms)",
    );
    await vi.advanceTimersByTimeAsync(59_892);
    expect(vi.getTimerCount()).toBe(1); // the check still waits
    await vi.advanceTimersByTimeAsync(1);
    await failure;
  });
});
