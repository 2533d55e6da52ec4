import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { backgroundTimer, clockDriftAllowance } from "../../src/clock";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("backgroundTimer", () => {
  it("waits out a delay longer than a timer holds, in steps, instead of firing at once", () => {
    const fired = vi.fn();
    backgroundTimer(2 ** 32, fired);
    vi.advanceTimersByTime(2 ** 31);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(2 ** 31);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("can be cancelled, also between steps", () => {
    const fired = vi.fn();
    const cancel = backgroundTimer(2 ** 32, fired);
    vi.advanceTimersByTime(2 ** 31);
    cancel();
    vi.advanceTimersByTime(2 ** 32);
    expect(fired).not.toHaveBeenCalled();
  });
});

describe("clockDriftAllowance", () => {
  it("is 1 % of the lease plus 2 ms", () => {
    expect(clockDriftAllowance(10_000)).toBe(102);
    expect(clockDriftAllowance(50)).toBe(2);
  });
});
