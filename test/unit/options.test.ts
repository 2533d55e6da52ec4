import { describe, expect, it } from "vitest";
import { Debounce, FairLock, Lock, quorum, Semaphore } from "../../src/index";
import { resolveAcquirePlan, resolveLockSettings } from "../../src/options";

// A client whose every method fails the test: constructing with bad input must not touch it.
const untouchable = {
  eval: () => {
    throw new Error("no request may be sent");
  },
};

describe("new Lock option errors name the option and the value", () => {
  it.each([
    [{ id: 42 }, TypeError, /`id`.*got 42/],
    [{ id: undefined }, TypeError, /`id`.*got undefined/],
    [{ lease: 0 }, RangeError, /`lease`.*milliseconds.*got 0/],
    [{ lease: -1 }, RangeError, /`lease`.*got -1/],
    [{ lease: 1.5 }, RangeError, /`lease`.*got 1.5/],
    [{ lease: Number.NaN }, RangeError, /`lease`.*got NaN/],
    [{ lease: Number.POSITIVE_INFINITY }, RangeError, /`lease`.*got Infinity/],
    [{ lease: "1000" }, TypeError, /`lease`.*got "1000"/],
    [{ retry: { delay: -1 } }, RangeError, /`retry.delay`.*non-negative.*got -1/],
    [{ retry: { delay: Number.POSITIVE_INFINITY } }, RangeError, /`retry.delay`.*got Infinity/],
    [{ retry: { delay: "100" } }, TypeError, /`retry.delay`.*got "100"/],
    // Its default maxDelay (ten times it) would be past any safe integer, refused by Redis as a lifetime.
    [{ retry: { delay: 1e16 } }, RangeError, /`retry.delay`.*got 10000000000000000/],
    [{ retry: { attempts: Number.NaN } }, RangeError, /`retry.attempts`.*got NaN/],
    [{ retry: { attempts: "3" } }, TypeError, /`retry.attempts`.*got "3"/],
    [{ retry: 3 }, TypeError, /`retry`.*got 3/],
    [{ uuid: 123 }, TypeError, /`uuid`.*got 123/],
    // A string, as wanted, but none of the choices: out of range, as for numbers.
    [{ server: "valkey" }, RangeError, /`server`.*"upstash" or "redis".*got "valkey"/],
    [{ server: 1 }, TypeError, /`server`.*got 1/],
    [{ waitUntil: "later" }, TypeError, /`waitUntil`.*function/],
    [{ fencing: { clockFloor: "yes" } }, TypeError, /`fencing.clockFloor`.*boolean/],
    [{ redis: {} }, TypeError, /`redis`.*eval/],
    [{ prefix: 5 }, TypeError, /`prefix`.*got 5/],
    [{ redis: undefined }, TypeError, /`redis`.*got undefined/],
    // Clients send a lone surrogate as U+FFFD: "a\uD800" and "a\uDBFF" would name one key, or one holder.
    [{ id: "lone:\uD800" }, RangeError, /`id`.*well-formed.*got a string with a lone surrogate near index 5/],
    [{ prefix: "\uDC00:" }, RangeError, /`prefix`.*well-formed/],
    [{ uuid: "token-\uDBFF" }, RangeError, /`uuid`.*well-formed.*lone surrogate near index 6$/],
  ])("%o → %o", (override, errorClass, message) => {
    const options = { id: "ok", redis: untouchable, ...override } as never;
    expect(() => new Lock(options)).toThrow(errorClass);
    expect(() => new Lock(options)).toThrow(message);
  });

  it("rejects a missing options object with a TypeError", () => {
    expect(() => new Lock(undefined as never)).toThrow(TypeError);
  });

  it("accepts ids, prefixes and uuids beyond the BMP (surrogate pairs)", () => {
    const options = { id: "😀{ü}", prefix: "𝄞:", uuid: "🔒", redis: untouchable } as never;
    expect(new Lock(options).id).toBe("😀{ü}");
  });
});

describe("acquire and extend reject bad input before any request", () => {
  const lock = new Lock({ id: "ok", redis: untouchable, uuid: "seeded" });

  it.each([
    [{ lease: 0 }, RangeError, /`lease`/],
    [{ lease: "5" }, TypeError, /`lease`/],
    [{ retry: { attempts: Number.NaN } }, RangeError, /`retry.attempts`/],
    [{ retry: { delay: Number.NaN } }, RangeError, /`retry.delay`.*NaN/],
    [{ uuid: 7 }, TypeError, /`uuid`.*got 7/],
  ])("acquire(%o)", async (config, errorClass, message) => {
    await expect(lock.acquire(config as never)).rejects.toThrow(errorClass);
    await expect(lock.acquireOrThrow(config as never)).rejects.toThrow(message);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "1500"])("extend(%o)", async (amount) => {
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
    [{ prefix: 5 }, TypeError, /`prefix`.*got 5/],
    [{ id: "x\uDFFF" }, RangeError, /`id`.*well-formed/],
  ])("%o", (override, errorClass, message) => {
    const options = { id: "d", redis: untouchable, wait: 10, callback, ...override } as never;
    expect(() => new Debounce(options)).toThrow(errorClass);
    expect(() => new Debounce(options)).toThrow(message);
  });
});

describe("options of waiting, fencing and auto-extend", () => {
  const lock = new Lock({ id: "ok", redis: untouchable });

  it.each([
    [{ retry: { backoff: "linear" } }, RangeError, /`retry.backoff`.*"linear"/],
    [{ retry: { backoff: 2 } }, TypeError, /`retry.backoff`.*got 2/],
    [{ retry: { maxDelay: 0 } }, RangeError, /`retry.maxDelay`.*got 0/],
    [
      { retry: { delay: 100, maxDelay: 50 } },
      RangeError,
      /`retry.maxDelay`.*at least `retry.delay` \(100\), got 50/,
    ],
    [{ retry: { jitter: 1.5 } }, RangeError, /`retry.jitter`.*got 1.5/],
    [{ retry: { jitter: "0.5" } }, TypeError, /`retry.jitter`/],
    [{ timeout: 0 }, RangeError, /`timeout`.*got 0/],
    [{ timeout: 2.5 }, RangeError, /`timeout`.*got 2.5/],
    [{ signal: {} }, TypeError, /`signal`.*AbortSignal/],
    // Review helper-122: one without removeEventListener passed, sent a try, then failed unhandled.
    [{ signal: { aborted: false, addEventListener() {} } }, TypeError, /`signal`.*AbortSignal/],
    [{ fencing: "yes" }, TypeError, /`fencing`.*boolean/],
    [{ autoExtend: 5 }, TypeError, /`autoExtend`/],
    [{ autoExtend: { interval: 0 } }, RangeError, /`autoExtend.interval`/],
    [
      { lease: 1_000, autoExtend: { interval: 1_000 } },
      RangeError,
      /`autoExtend.interval`.*less than the lease/,
    ],
    [{ onLost: "call me" }, TypeError, /`onLost`.*function/],
  ])("acquire(%o)", async (config, errorClass, message) => {
    await expect(lock.acquire(config as never)).rejects.toThrow(errorClass);
    await expect(lock.acquire(config as never)).rejects.toThrow(message);
  });

  it("accepts what 0.2 accepted: Infinity, fractional and negative attempts, a zero delay, an empty uuid", async () => {
    const aborted = AbortSignal.abort(new Error("stop"));
    for (const config of [
      { retry: { attempts: Number.POSITIVE_INFINITY } },
      { retry: { attempts: 2.5 } },
      { retry: { attempts: -1 } },
      { retry: { delay: 0 } },
      { retry: { delay: 2.5 } },
      { uuid: "" },
    ]) {
      // Validated, then stopped by the aborted signal before any request.
      await expect(lock.acquire({ ...config, signal: aborted })).rejects.toThrow("stop");
    }
    expect(() => new Lock({ id: "", redis: untouchable, uuid: "", retry: { delay: 0 } })).not.toThrow();
  });

  it("rejects bad constructor values for the same options", () => {
    expect(() => new Lock({ id: "x", redis: untouchable, fencing: 1 } as never)).toThrow(TypeError);
    expect(() => new Lock({ id: "x", redis: untouchable, autoExtend: { interval: -5 } })).toThrow(RangeError);
    expect(() => new Lock({ id: "x", redis: untouchable, retry: { jitter: -0.1 } })).toThrow(RangeError);
    expect(() => new Lock({ id: "x", redis: untouchable, onLost: 3 } as never)).toThrow(TypeError);
  });
});

describe("new Semaphore option errors, before any request", () => {
  it.each([
    [{ limit: 0 }, RangeError, /`limit`.*permits.*got 0/],
    [{ limit: -3 }, RangeError, /`limit`.*got -3/],
    [{ limit: 2.5 }, RangeError, /`limit`.*got 2.5/],
    [{ limit: Number.NaN }, RangeError, /`limit`.*got NaN/],
    [{ limit: "5" }, TypeError, /`limit`.*got "5"/],
    [{ limit: undefined }, TypeError, /`limit`.*got undefined/],
    [{ limit: 1_001 }, RangeError, /`limit`.*at most 1000.*got 1001/],
    [{ limit: 3, fair: "yes" }, TypeError, /`fair`.*boolean.*got "yes"/],
    [{ limit: 3, id: 7 }, TypeError, /`id`/],
    // Each acquisition draws its own token: a semaphore's holders are many. Ignoring it would mislead.
    [{ limit: 3, uuid: "seeded" }, TypeError, /`uuid`.*Semaphore.*acquire\(\{ uuid \}\)/],
  ])("%o", (override, errorClass, message) => {
    const options = { id: "s", redis: untouchable, ...override } as never;
    expect(() => new Semaphore(options)).toThrow(errorClass);
    expect(() => new Semaphore(options)).toThrow(message);
  });

  it("accepts 1 and 1000 permits", () => {
    expect(new Semaphore({ id: "s", redis: untouchable, limit: 1 }).limit).toBe(1);
    expect(new Semaphore({ id: "s", redis: untouchable, limit: 1_000 }).limit).toBe(1_000);
  });

  it('permit(uuid) refuses a uuid that names no permit: empty means none, as `uuid: ""` does', () => {
    const semaphore = new Semaphore({ id: "s", redis: untouchable, limit: 2 });
    expect(() => semaphore.permit("")).toThrow(RangeError);
    expect(() => semaphore.permit("")).toThrow(/`uuid`.*non-empty.*got ""/);
    expect(() => semaphore.permit(7 as never)).toThrow(TypeError);
    expect(semaphore.permit("seeded").id).toBe("s");
  });
});

describe("what the constructor options alone show to be wrong fails in the constructor", () => {
  it.each([
    [
      { retry: { delay: 500, maxDelay: 100 } },
      RangeError,
      /`retry.maxDelay`.*at least `retry.delay` \(500\), got 100/,
    ],
    [{ retry: { delay: 500 }, lease: 10_000 }, undefined, undefined],
    [
      { lease: 1_000, autoExtend: { interval: 5_000 } },
      RangeError,
      /`autoExtend.interval`.*less than the lease \(1000 ms\), got 5000/,
    ],
    [{ lease: 10, autoExtend: true }, undefined, undefined],
    // Review helper-59 (2026-12-04): this named `autoExtend.interval`, which the caller never set.
    [{ lease: 1, autoExtend: true }, RangeError, /`lease` to be at least 2 ms with `autoExtend`.*got 1$/],
    [{ retry: [] }, TypeError, /`retry` to be an object, got an array/],
    [{ fencing: [] }, TypeError, /`fencing` to be a boolean or an object, got an array/],
    [{ autoExtend: [] }, TypeError, /`autoExtend` to be a boolean or an object, got an array/],
  ] as [object, unknown, unknown][])("%o", (override, errorClass, message) => {
    const make = () => new Lock({ id: "x", redis: untouchable, ...(override as object) });
    if (errorClass === undefined) expect(make).not.toThrow();
    else {
      expect(make).toThrow(errorClass);
      expect(make).toThrow(message);
    }
  });
});

describe("quorums", () => {
  it("an array of clients is refused, saying how to make a quorum", () => {
    expect(() => new Lock({ id: "x", redis: [untouchable, untouchable, untouchable] as never })).toThrow(
      /`redis`.*quorum\(\[\.\.\.clients\]\)/,
    );
  });

  it("needs an odd number of distinct clients", () => {
    expect(() => quorum([untouchable, { ...untouchable }])).toThrow(RangeError);
    expect(() => quorum("abc" as never)).toThrow(TypeError);
    expect(() => quorum([untouchable, { ...untouchable }, untouchable])).toThrow(/client at 0 again at 2/);
    expect(() => quorum([untouchable, {} as never, untouchable])).toThrow(/`quorum\(\)\[1\]`/);
  });

  it("refuses fair locks and fencing, which need one order", async () => {
    const redis = quorum([untouchable, { ...untouchable }, { ...untouchable }]);
    expect(() => new FairLock({ id: "x", redis })).toThrow(/quorum/);
    expect(() => new Semaphore({ id: "x", redis, limit: 2, fair: true })).toThrow(/quorum/);
    expect(() => new Lock({ id: "x", redis, fencing: true })).toThrow(/`fencing`.*quorum/);
    await expect(new Lock({ id: "x", redis }).acquire({ fencing: true })).rejects.toThrow(/`fencing`/);
    // `null` on the lock means "the default": a call's `fencing: true` still asks for fencing.
    const loose = new Lock({ id: "x", redis, fencing: null as never });
    await expect(loose.acquire({ fencing: true })).rejects.toThrow(/`fencing`.*quorum/);
  });
});

describe("Debounce", () => {
  it("types call() from the callback's parameters", () => {
    const debounce = new Debounce({
      id: "d",
      redis: untouchable,
      callback: (_reason: string, _count: number) => {},
    });
    // @ts-expect-error: the callback takes a string and a number
    const wrong = () => debounce.call(1);
    expect(typeof wrong).toBe("function");
  });
});

// Review helper-104 (2026-12-05): the options were checked, then read from the caller's objects at each
// call with options: `attempts` set to NaN after the constructor made a wait that never ended.
describe("what the constructor checked is what every call uses", () => {
  it("a change to the caller's options after the constructor does not reach the lock", () => {
    const retry = { attempts: 3, delay: 100 };
    const options = { id: "x", redis: untouchable, lease: 5_000, retry, autoExtend: { interval: 1_000 } };
    const settings = resolveLockSettings(options);
    retry.attempts = Number.NaN;
    retry.delay = -1;
    options.lease = -5;
    options.autoExtend.interval = 0;
    for (const call of [undefined, {}, { uuid: "u" }]) {
      const plan = resolveAcquirePlan(call, settings);
      expect(plan).toMatchObject({ lease: 5_000, attempts: 3, renewInterval: 1_000 });
      expect(plan.backoff.delay).toBe(100);
    }
  });

  it("reads each option once: a getter that changes its answer is checked and used as first read", () => {
    let reads = 0;
    const retry = {
      get attempts() {
        reads += 1;
        return reads === 1 ? 4 : Number.NaN;
      },
    };
    const settings = resolveLockSettings({ id: "x", redis: untouchable, retry });
    expect(resolveAcquirePlan({ lease: 1_000 }, settings).attempts).toBe(4);
    expect(reads).toBe(1);
  });

  it("Semaphore and Debounce read each of their own options once (review helper-106)", () => {
    const reads = new Map<PropertyKey, number>();
    const counted = <T extends object>(options: T) =>
      new Proxy(options, {
        get(target, key, receiver) {
          reads.set(key, (reads.get(key) ?? 0) + 1);
          return Reflect.get(target, key, receiver);
        },
      });
    new Semaphore(counted({ id: "s", redis: untouchable, limit: 2, fair: false }));
    expect([reads.get("limit"), reads.get("fair"), reads.get("id"), reads.get("redis")]).toEqual([
      1, 1, 1, 1,
    ]);
    reads.clear();
    new Debounce(counted({ id: "d", redis: untouchable, wait: 10, callback: () => {} }));
    expect([...reads.entries()].filter(([, count]) => count > 1)).toEqual([]);
  });
});

// Review helper-104 (2026-12-05): a try is given the lease less the clock-drift allowance (2 ms and 1 %)
// to be answered in. A lease of 1 or 2 ms left none: every acquire failed as "Redis did not answer".
describe("a lease too short for any try to be answered in", () => {
  it.each([1, 2])("lease: %i is refused before any request", async (lease) => {
    expect(() => new Lock({ id: "x", redis: untouchable, lease })).toThrow(RangeError);
    expect(() => new Lock({ id: "x", redis: untouchable, lease })).toThrow(/`lease`.*at least 3 ms.*got/);
    const lock = new Lock({ id: "x", redis: untouchable });
    await expect(lock.acquire({ lease })).rejects.toThrow(/`lease`.*at least 3 ms.*got/);
  });

  it("lease: 3 is accepted", () => {
    expect(() => new Lock({ id: "x", redis: untouchable, lease: 3 })).not.toThrow();
  });
});
