import { describe, expect, it } from "vitest";
import { Debounce, Lock } from "../../src/index";

// A client whose every method fails the test: constructing with bad input must not touch it.
const untouchable = {
  eval: () => {
    throw new Error("no request may be sent");
  },
};

describe("new Lock option errors name the option and the value", () => {
  it.each([
    [{ id: 42 }, TypeError, /`id`.*got 42/],
    [{ id: "" }, RangeError, /`id`.*got ""/],
    [{ id: undefined }, TypeError, /`id`.*got undefined/],
    [{ lease: 0 }, RangeError, /`lease`.*milliseconds.*got 0/],
    [{ lease: -1 }, RangeError, /`lease`.*got -1/],
    [{ lease: 1.5 }, RangeError, /`lease`.*got 1.5/],
    [{ lease: Number.NaN }, RangeError, /`lease`.*got NaN/],
    [{ lease: Number.POSITIVE_INFINITY }, RangeError, /`lease`.*got Infinity/],
    [{ lease: "1000" }, TypeError, /`lease`.*got "1000"/],
    [{ retry: { delay: 0 } }, RangeError, /`retry.delay`.*got 0/],
    [{ retry: { delay: 2.5 } }, RangeError, /`retry.delay`.*got 2.5/],
    [{ retry: { delay: "100" } }, TypeError, /`retry.delay`.*got "100"/],
    [{ retry: { attempts: -1 } }, RangeError, /`retry.attempts`.*got -1/],
    [{ retry: { attempts: 1.5 } }, RangeError, /`retry.attempts`.*got 1.5/],
    [{ retry: { attempts: "3" } }, TypeError, /`retry.attempts`.*got "3"/],
    [{ retry: 3 }, TypeError, /`retry`.*got 3/],
    [{ uuid: "" }, RangeError, /`uuid`.*got ""/],
    [{ uuid: 123 }, TypeError, /`uuid`.*got 123/],
    [{ redis: {} }, TypeError, /`redis`.*eval/],
    [{ redis: undefined }, TypeError, /`redis`.*got undefined/],
  ])("%o → %o", (override, errorClass, message) => {
    const options = { id: "ok", redis: untouchable, ...override } as never;
    expect(() => new Lock(options)).toThrow(errorClass);
    expect(() => new Lock(options)).toThrow(message);
  });

  it("rejects a missing options object with a TypeError", () => {
    expect(() => new Lock(undefined as never)).toThrow(TypeError);
  });
});

describe("acquire and extend reject bad input before any request", () => {
  const lock = new Lock({ id: "ok", redis: untouchable, uuid: "seeded" });

  it.each([
    [{ lease: 0 }, RangeError, /`lease`/],
    [{ lease: "5" }, TypeError, /`lease`/],
    [{ retry: { attempts: -2 } }, RangeError, /`retry.attempts`/],
    [{ retry: { delay: Number.NaN } }, RangeError, /`retry.delay`.*NaN/],
    [{ uuid: "" }, RangeError, /`uuid`/],
    [{ uuid: 7 }, TypeError, /`uuid`.*got 7/],
  ])("acquire(%o)", async (config, errorClass, message) => {
    await expect(lock.acquire(config as never)).rejects.toThrow(errorClass);
    await expect(lock.acquireOrThrow(config as never)).rejects.toThrow(message);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "1500"])("extend(%o)", async (amount) => {
    const expected = typeof amount === "number" ? RangeError : TypeError;
    await expect(lock.extend(amount as never)).rejects.toThrow(expected);
    await expect(lock.extend(amount as never)).rejects.toThrow(/`amt`/);
  });
});

describe("new Debounce option errors", () => {
  const callback = () => {};
  it.each([
    [{ id: "" }, RangeError, /`id`/],
    [{ wait: 0 }, RangeError, /`wait`.*got 0/],
    [{ wait: "10" }, TypeError, /`wait`/],
    [{ callback: "nope" }, TypeError, /`callback`.*got "nope"/],
    [{ redis: null }, TypeError, /`redis`.*got null/],
  ])("%o", (override, errorClass, message) => {
    const options = { id: "d", redis: untouchable, wait: 10, callback, ...override } as never;
    expect(() => new Debounce(options)).toThrow(errorClass);
    expect(() => new Debounce(options)).toThrow(message);
  });
});
