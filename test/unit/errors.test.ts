import { describe, expect, it } from "vitest";
import {
  InstanceTimeoutError,
  isLockError,
  LockAcquisitionError,
  LockLostError,
  LockRedisError,
} from "../../src/errors";
import { UnreadableReplyError } from "../../src/redis/reply";

describe("LockAcquisitionError", () => {
  const base = { attempts: 3, elapsedMs: 204.6 };

  it("says how many tries, how long, and that another owner held it", () => {
    const error = new LockAcquisitionError("job", { ...base, reason: "held" });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: it is held by another owner',
    );
    expect(error).toMatchObject({ code: "LOCK_NOT_ACQUIRED", lockId: "job", attempts: 3, reason: "held" });
    expect(error.cause).toBeUndefined();
  });

  it("names another caller of this instance when that was the holder, as nothing was asked of Redis", () => {
    const error = new LockAcquisitionError("job", { ...base, attempts: 1, reason: "held", here: true });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 1 attempt in 205 ms: another caller of this instance held it or was acquiring it',
    );
  });

  it("says which attempts were waits here, so the count does not read as tries Redis refused", () => {
    const waited = (attempts: number, waitedHere: number) =>
      new LockAcquisitionError("job", { ...base, attempts, waitedHere, reason: "held", here: true }).message;
    const holder = "another caller of this instance held it or was acquiring it";
    expect(waited(1, 1)).toBe(
      `Could not acquire lock "job" after 1 attempt (a wait here, nothing sent to Redis) in 205 ms: ${holder}`,
    );
    expect(waited(5, 5)).toBe(
      `Could not acquire lock "job" after 5 attempts (each a wait here, nothing sent to Redis) in 205 ms: ${holder}`,
    );
    expect(waited(3, 1)).toBe(
      `Could not acquire lock "job" after 3 attempts (2 sent to Redis, 1 wait here) in 205 ms: ${holder}`,
    );
    expect(waited(5, 4)).toBe(
      `Could not acquire lock "job" after 5 attempts (1 sent to Redis, 4 waits here) in 205 ms: ${holder}`,
    );
  });

  it("names Redis's silence when that caller's try went unanswered all the while, as the cause", () => {
    const silence = new LockRedisError("job", "acquire", new InstanceTimeoutError("job", "acquire", 310));
    const error = new LockAcquisitionError("job", {
      ...base,
      reason: "held",
      here: true,
      turnSilent: true,
      error: silence,
    });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: another caller of this instance was acquiring it, and Redis did not answer (no reply within 310 ms)',
    );
    expect(error.cause).toBe(silence);
  });

  it("names this call's own try, sent once it had the turn and cut off by the timeout, after that caller", () => {
    const silence = new LockRedisError("job", "acquire", new InstanceTimeoutError("job", "acquire", 310));
    const error = new LockAcquisitionError("job", { ...base, reason: "timeout", here: true, error: silence });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: the timeout ran out while another caller of this instance held it or was acquiring it; then Redis did not answer (no reply within 310 ms)',
    );
    expect(error.cause).toBe(silence);
  });

  it("names a release of the same uuid here when the last wait was for it, as nothing was asked of Redis", () => {
    const error = new LockAcquisitionError("job", { ...base, reason: "held", local: true });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: a release, renewal or extend of this uuid here was still unanswered (it may yet reach Redis)',
    );
  });

  it("on a timeout, tells both the last answer and the try the timeout cut off, which is the cause", () => {
    const cutOff = new LockRedisError("job", "acquire", new InstanceTimeoutError("job", "acquire", 50));
    const error = new LockAcquisitionError("job", { ...base, reason: "timeout", error: cutOff });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: the timeout ran out while another owner held it, as the last answer said; then Redis did not answer (no reply within 50 ms)',
    );
    expect(error.cause).toBe(cutOff);
  });

  it("on a Redis error, says what Redis did, never that the lock was held", () => {
    const down = new LockRedisError("job", "acquire", new Error("connect ECONNREFUSED 127.0.0.1:1"));
    const error = new LockAcquisitionError("job", { ...base, reason: "redis-error", error: down });
    expect(error.message).toBe(
      'Could not acquire lock "job" after 3 attempts in 205 ms: Redis could not be reached: connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(error.message).not.toMatch(/held/);
  });
});

describe("LockRedisError", () => {
  it.each([
    [
      new InstanceTimeoutError("job", "release", 10_000),
      {},
      "Redis did not answer (no reply within 10000 ms)",
    ],
    [
      new Error("WRONGPASS invalid username-password pair"),
      { refused: true },
      "Redis refused the request: WRONGPASS invalid username-password pair",
    ],
    [
      Object.assign(new Error("Command timed out"), {}),
      {},
      "Redis did not answer (the client's timeout: Command timed out)",
    ],
    [
      new UnreadableReplyError("Expected a script reply of integers or nil, got an object"),
      {},
      "Redis answered in a form the lock cannot read (check the client's reply settings): Expected a script reply of integers or nil, got an object",
    ],
    [new TypeError("fetch failed"), {}, "Redis could not be reached: fetch failed"],
    // Review helper-59 (2026-12-04): error replies read as "could not be reached", an empty AggregateError
    // as nothing, and a plain object as "[object Object]".
    [
      new Error("READONLY You can't write against a read only replica."),
      {},
      "Redis answered with an error: READONLY You can't write against a read only replica.",
    ],
    [
      new Error("ERR max requests limit exceeded"),
      {},
      "Redis answered with an error: ERR max requests limit exceeded",
    ],
    [new Error("read ECONNRESET"), {}, "Redis could not be reached: read ECONNRESET"],
    [
      new Error("ERR Redis is unreachable: connect ECONNREFUSED 127.0.0.1:1"),
      {},
      "Redis could not be reached: ERR Redis is unreachable: connect ECONNREFUSED 127.0.0.1:1",
    ],
    [
      Object.assign(new AggregateError([new Error("connect ECONNREFUSED ::1:1")], ""), {
        code: "ECONNREFUSED",
      }),
      {},
      "Redis could not be reached: AggregateError (ECONNREFUSED)",
    ],
    [{ message: "upstream gone", status: 502 }, {}, "Redis could not be reached: upstream gone"],
  ] as const)("reads %o as the truth about Redis", (cause, options, reason) => {
    const error = new LockRedisError("job", "release", cause, options);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(`Redis request for release of lock "job" failed: ${reason}`);
    expect(error.refused).toBe("refused" in options);
  });

  it("keeps a redacted copy of a client's own AggregateError, and of a plain object it rejected with", () => {
    const secret = "9f1c-secret-token";
    const quoted = new AggregateError(
      [new Error("boom")],
      `Command failed: ERR boom, command was: [${secret}]`,
    );
    const error = new LockRedisError("job", "acquire", quoted, { secret });
    expect(error.cause).not.toBe(quoted);
    expect(`${error.message} ${(error.cause as Error).message}`).not.toContain(secret);
    const plain = new LockRedisError("job", "acquire", { message: `no ${secret}`, status: 502 }, { secret });
    expect(plain.cause).toMatchObject({ message: "no <token>", status: 502 });
  });

  it("takes the token out of the message and of the cause it keeps, stack included", () => {
    const secret = "9f1c-secret-token";
    const original = new Error(`ERR Error running script, command was: [evalsha, abc, 1, job, ${secret}]`);
    const error = new LockRedisError("job", "acquire", original, { refused: true, secret });
    const cause = error.cause as Error;
    expect(cause).not.toBe(original);
    expect(`${error.message} ${cause.message} ${cause.stack}`).not.toContain(secret);
  });
});

describe("InstanceTimeoutError", () => {
  // Review helper-121 (2026-12-05): a try given under half a millisecond said "no reply within 0 ms".
  it("names at least 1 ms, the shortest wait a timer makes", () => {
    expect(new InstanceTimeoutError("job", "acquire", 0.4).message).toContain("no reply within 1 ms");
    expect(new InstanceTimeoutError("job", "acquire", 0).timeoutMs).toBe(0);
    expect(new InstanceTimeoutError("job", "acquire", 310.4).message).toContain("no reply within 310 ms");
  });
});

describe("LockLostError", () => {
  it("says whether Redis named another holder or the deadline passed, and whether renewals were failing", () => {
    expect(new LockLostError("job", "taken").message).toMatch(
      /^Lock "job" was lost: Redis holds another token/,
    );
    expect(new LockLostError("job", "expired").message).toBe('Lock "job" was lost: its lease ran out');
    expect(new LockLostError("job", "expired", true).message).toBe(
      'Lock "job" was lost: no renewal succeeded before the lease ran out',
    );
    expect(new LockLostError("job", "not-held")).toMatchObject({ code: "LOCK_LOST", reason: "not-held" });
  });
});

describe("isLockError", () => {
  it("knows the library's errors, also from another copy of the package, and nothing else", () => {
    const copy = Object.assign(new Error("from the CJS copy"), { code: "LOCK_LOST", lockId: "job" });
    expect(isLockError(new LockLostError("job", "taken"))).toBe(true);
    expect(isLockError(copy)).toBe(true);
    expect(isLockError(Object.assign(new Error("x"), { code: "ECONNRESET", lockId: "job" }))).toBe(false);
    expect(isLockError({ code: "LOCK_LOST", lockId: "job" })).toBe(false); // not an Error
    expect(isLockError(undefined)).toBe(false);
  });
});
