import { describe, expect, it } from "vitest";
import { Debounce } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();

describe("Debounce", () => {
  it("runs the callback once for a burst of calls from several instances, with the winning call's arguments", async () => {
    const id = uniqueId("debounce");
    const runs: number[] = [];
    const make = () => new Debounce({ id, redis, wait: 300, callback: (n: number) => runs.push(n) });
    const a = make();
    const b = make();

    const outcomes = await Promise.all([a.call(1), b.call(2), a.call(3), b.call(4)]);
    expect(runs).toHaveLength(1);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(runs[0]).toBe([1, 2, 3, 4][outcomes.indexOf(true)]);
  });

  it("runs again after a quiet period", async () => {
    const id = uniqueId("debounce-again");
    let runs = 0;
    const debounce = new Debounce({ id, redis, wait: 100, callback: () => runs++ });
    expect(await debounce.call()).toBe(true);
    expect(await debounce.call()).toBe(true);
    expect(runs).toBe(2);
  });

  it("gives its counter key an expiry (0.2's lived forever)", async () => {
    const id = uniqueId("debounce-expiry");
    const debounce = new Debounce({ id, redis, wait: 100, callback: () => {} });
    await debounce.call();
    const pttl = await redis.pttl(id);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(100 + 60_000);
  });

  it("keys its counter by prefix + id", async () => {
    const id = uniqueId("debounce-prefix");
    await new Debounce({ id, redis, prefix: "p:", wait: 10, callback: () => {} }).call();
    expect(await redis.exists(`p:${id}`)).toBe(1);
    expect(await redis.exists(id)).toBe(0);
  });

  it("propagates the callback's error", async () => {
    const failure = new Error("callback failed");
    const debounce = new Debounce({
      id: uniqueId("debounce-error"),
      redis,
      wait: 50,
      callback: () => {
        throw failure;
      },
    });
    await expect(debounce.call()).rejects.toBe(failure);
  });
});
