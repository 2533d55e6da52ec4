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
    await vi.advanceTimersByTimeAsync(2); // and the turn after, for a reply that came meanwhile (`within`)
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
    // The keys live 60 500 ms from the count (sent at 0), less 1 % of the 60 s grace + 2 ms for clock drift.
    const failure = expect(call).rejects.toSatisfy(
      (error) =>
        error instanceof LockRedisError && error.reason === "Redis did not answer (no reply within 59398 ms)",
    );
    await vi.advanceTimersByTimeAsync(59_897);
    expect(vi.getTimerCount()).toBe(1); // the check still waits
    await vi.advanceTimersByTimeAsync(2); // and the turn after (`within`)
    await failure;
  });

  it("keeps about the 60 s grace for the check after a long wait (100 min): drift is allowed on the grace", async () => {
    // Review helper-102: 1 % of the whole lifetime came off the grace, which it ate from a wait of 99 min on:
    // every call failed without sending its check.
    const answering = { eval: async () => 1 }; // the count, 1; the check, "the last call"
    let ran = false;
    const debounce = new Debounce({
      id: "d",
      redis: answering,
      wait: 6_000_000,
      callback: () => (ran = true),
    });
    const call = debounce.call();
    await vi.advanceTimersByTimeAsync(6_000_000);
    await expect(call).resolves.toBe(true);
    expect(ran).toBe(true);
  });
});
