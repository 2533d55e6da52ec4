import { afterEach, describe, expect, it, vi } from "vitest";
import { newCallId, newToken } from "../../src/ids";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

/** The order a script reads from a request id (`order` in the scripts: the leading digits). */
const orderOf = (id: string) => Number(/^\d+/.exec(id)?.[0]);

describe("newCallId", () => {
  it("is `<order>-<6 base-36 characters>`", () => {
    expect(newCallId()).toMatch(/^\d+-[0-9a-z]{6}$/);
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
