import { describe, expect, it } from "vitest";
import { backoffDelay, backoffSettled } from "../../src/backoff";

const fixed = { delay: 100, backoff: "fixed", maxDelay: 1_000, jitter: 0 } as const;
const exponential = { ...fixed, backoff: "exponential" } as const;

describe("backoffDelay", () => {
  it("fixed waits the same delay after every attempt (0.2's timing)", () => {
    expect([1, 2, 3, 10].map((attempt) => backoffDelay(attempt, fixed, 0.5))).toEqual([100, 100, 100, 100]);
  });

  it("exponential doubles from delay up to maxDelay", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, exponential, 0))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(backoffDelay(10_000, exponential, 0)).toBe(1_000);
  });

  it("jitter takes away up to that fraction of the wait, at random", () => {
    const half = { ...fixed, jitter: 0.5 };
    expect(backoffDelay(1, half, 0)).toBe(100);
    expect(backoffDelay(1, half, 0.999_999)).toBe(50);
    const full = { ...exponential, jitter: 1 };
    expect(backoffDelay(3, full, 0.25)).toBe(300);
  });
});

describe("backoffSettled", () => {
  it("is true from the attempt whose wait every later one repeats, and for every attempt of a fixed one", () => {
    expect([1, 4, 5, 6].map((attempt) => backoffSettled(attempt, exponential))).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect(backoffSettled(1, fixed)).toBe(true);
    expect(backoffSettled(1, { ...exponential, delay: 0 })).toBe(true);
  });

  it("past 52 doublings, where the growth stops though the cap is not reached", () => {
    const huge = { ...exponential, delay: 0.1, maxDelay: 1e15 };
    expect(backoffSettled(52, huge)).toBe(false);
    expect(backoffSettled(53, huge)).toBe(true);
    expect(backoffDelay(53, huge, 0)).toBe(backoffDelay(1_000, huge, 0));
  });
});
