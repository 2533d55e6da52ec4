// Review helper-90 (2026-12-05), on what an @upstash/redis client hands back that Redis did not say:
// - with a fixed `signal` (and no auto-pipelining: versions 1.30 to 1.32 have none), once that signal aborted
//   the client answers every call itself with the abort's reason, nil for a plain abort(): a free lock read
//   as held (`false`), a held one's release and extend as "not held", a renewal as a lost lock (9/9);
// - its error messages quote the command, keys included: a lock id holding "noscript" made any EVALSHA
//   error (WRONGTYPE, an outage) send the script again in full, a second billed command (3/3).
import { describe, expect, it, vi } from "vitest";
import { Lock } from "../../src/index";
import { clientFor, sharedEndpoint } from "../faults/support/endpoints";
import { pause } from "../faults/support/time";
import { uniqueId } from "../support/redis";

const aborting = () => {
  const controller = new AbortController();
  const redis = clientFor(sharedEndpoint(), { signal: controller.signal, enableAutoPipelining: false });
  return { controller, redis };
};
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: { name: string; reason?: string }) => ({ error: error.name, reason: error.reason }),
  );
const GAVE_UP = {
  error: "LockRedisError",
  reason: expect.stringMatching(/^Redis did not answer \(the client's/),
};

describe("@upstash/redis with its signal aborted", () => {
  it("acquire of a free lock: Redis did not answer, not held", async () => {
    const { controller, redis } = aborting();
    controller.abort();
    const lock = new Lock({ id: uniqueId("gave-up-acquire"), redis, lease: 2_000 });
    expect(await outcome(lock.acquire({ retry: { attempts: 1 } }))).toEqual(GAVE_UP);
  });

  it("release and extend of a held lock: Redis did not answer, not 'not held'", async () => {
    const { controller, redis } = aborting();
    const id = uniqueId("gave-up-held");
    const lock = new Lock({ id, redis, lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    controller.abort();
    expect(await outcome(lock.extend(5_000))).toEqual(GAVE_UP);
    expect(await outcome(lock.release())).toEqual(GAVE_UP);
    expect(await clientFor(sharedEndpoint()).exists(id)).toBe(1); // still held: nothing was asked of Redis
    await clientFor(sharedEndpoint()).del(id);
  });

  it("a renewal is no lost lock while the lease lasts", async () => {
    const { controller, redis } = aborting();
    const id = uniqueId("gave-up-renewal");
    const onLost = vi.fn();
    const lock = new Lock({ id, redis, lease: 1_500, autoExtend: { interval: 200 }, onLost });
    expect(await lock.acquire()).toBe(true);
    controller.abort();
    await pause(500); // two renewals
    expect(onLost).not.toHaveBeenCalled();
    await clientFor(sharedEndpoint()).del(id);
  });
});

describe("a lock id that holds the word NOSCRIPT", () => {
  it("an EVALSHA error that is not NOSCRIPT sends no EVAL after it", async () => {
    const redis = clientFor(sharedEndpoint(), { enableAutoPipelining: false });
    const sent: string[] = [];
    const { eval: evaluate, evalsha } = redis;
    Object.assign(redis, {
      eval: (...args: Parameters<typeof evaluate>) => {
        sent.push("eval");
        return evaluate.apply(redis, args);
      },
      evalsha: (...args: Parameters<typeof evalsha>) => {
        sent.push("evalsha");
        return evalsha.apply(redis, args);
      },
    });
    const id = uniqueId("noscript");
    const lock = new Lock({ id, redis, lease: 5_000 });
    expect(await lock.acquire()).toBe(true); // the first use of each script sends it in full
    expect(await lock.extend(5_000)).toBe(true);
    await redis.del(id);
    await redis.hset(id, { field: "1" }); // WRONGTYPE for the lock's scripts
    sent.length = 0;
    expect(await outcome(lock.extend(5_000))).toMatchObject({ error: "LockRedisError" });
    expect(sent).toEqual(["evalsha"]);
    await redis.del(id);
  });
});
