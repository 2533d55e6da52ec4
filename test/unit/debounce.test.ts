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
});
