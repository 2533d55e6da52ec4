import { afterEach, describe, expect, it, vi } from "vitest";
import { newCallId, newTimedCallId, newToken } from "../../src/ids";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

/** The order of a request id: its part before the dash, in base 36. */
const orderOf = (id: string) => Number.parseInt(id.split("-")[0] ?? "", 36);

/** The order Debounce's script reads from its call ids: the leading digits. */
const timeOf = (id: string) => Number(/^\d+/.exec(id)?.[0]);

describe("newCallId", () => {
  it("is `<order in base 36, 10 characters>-<6 base-36 characters>`: 17 characters on every request", () => {
    expect(newCallId()).toMatch(/^[0-9a-z]{10}-[0-9a-z]{6}$/);
  });

  it("orders ids strictly, even many made in one millisecond, and even when the wall clock steps back", () => {
    vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ["Date"] });
    const ids = Array.from({ length: 1000 }, () => newCallId());
    vi.setSystemTime(1_600_000_000_000);
    ids.push(newCallId(), newCallId());
    const orders = ids.map(orderOf);
    for (let i = 1; i < orders.length; i++) expect(orders[i]).toBeGreaterThan(orders[i - 1] as number);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("counts in microseconds of the wall clock, so ids of different processes interleave in time", () => {
    vi.useFakeTimers({ now: 1_900_000_000_000, toFake: ["Date"] });
    expect(orderOf(newCallId())).toBeGreaterThanOrEqual(1_900_000_000_000 * 1000);
  });
});

describe("newTimedCallId", () => {
  it("is Debounce's: `<µs of the wall clock, in decimal>-<6 base-36 characters>`, ordered with newCallId's", () => {
    vi.useFakeTimers({ now: 1_900_000_000_000, toFake: ["Date"] });
    const timed = newTimedCallId();
    expect(timed).toMatch(/^\d+-[0-9a-z]{6}$/);
    expect(timeOf(timed)).toBeGreaterThanOrEqual(1_900_000_000_000 * 1000);
    expect(orderOf(newCallId())).toBeGreaterThan(timeOf(timed));
  });
});

describe("newToken", () => {
  it("is a random UUID", () => {
    const token = newToken();
    expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(newToken()).not.toBe(token);
  });

  it("without crypto.randomUUID, throws a TypeError that says how to pass a token instead", () => {
    vi.stubGlobal("crypto", {});
    expect(() => newToken()).toThrow(TypeError);
    expect(() => newToken()).toThrow(/acquire\(\{ uuid \}\)/);
  });
});
