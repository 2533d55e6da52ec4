import { SocketTimeoutError, TimeoutError } from "redis";
import { describe, expect, it } from "vitest";
import { LockRedisError } from "../../../src/errors";
import {
  isClientTimeout,
  isConnectionRefused,
  isRefusal,
  redacted,
  summarize,
} from "../../../src/redis/failure";

const TOKEN = "3925dc98-8c52-423e-b67d-e242aa6beb34";
// What @upstash/redis throws for a non-2xx answer: the error, then the whole command, script and token.
const upstash = Object.assign(
  new Error(
    `WRONGTYPE Operation against a key holding the wrong kind of value script: 443e, on @user_script:5., command was: ["eval","#!lua flags=allow-key-locking\\nif redis.call(\\"GET\\", KEYS[2]) == ARGV[2] then",2,"k","{k}:receipt","${TOKEN}","y0pe"]`,
  ),
  { name: "UpstashError" },
);

describe("summarize", () => {
  it("keeps what Redis said, without the quoted command, the client's prefix, or the token", () => {
    expect(summarize(upstash, TOKEN)).toBe(
      "WRONGTYPE Operation against a key holding the wrong kind of value script: 443e, on @user_script:5.",
    );
    expect(summarize(new Error("Command failed: NOPERM this user has no permissions"))).toBe(
      "NOPERM this user has no permissions",
    );
    expect(summarize(new Error(`first line ${TOKEN}\nsecond`), TOKEN)).toBe("first line <token>");
    expect(summarize("x".repeat(500))).toHaveLength(200);
  });

  // Review helper-134 (stop 50): a uuid of "a" made a READONLY error read "You c<token>n't write <token>g<token>inst".
  it("takes a short token out where it stands alone, not out of the words it is part of", () => {
    const readOnly = new Error(`READONLY You can't write against a read only replica. args=["a","x-a",9]`);
    expect(summarize(readOnly, "a")).toBe(
      // The article is the token too, as far as anyone can tell: taken out, on the safe side.
      `READONLY You can't write against <token> read only replica. args=["<token>","x-<token>",9]`,
    );
    expect(summarize(new Error(`ERR for ${TOKEN}: ${TOKEN}x x${TOKEN}`), TOKEN)).toBe(
      "ERR for <token>: <token>x x<token>",
    );
  });
});

describe("isRefusal", () => {
  it.each([
    "Unauthorized, command was: [...]",
    "WRONGPASS invalid or missing auth token",
    "NOAUTH Authentication required.",
    "NOPERM this user has no permissions to run the 'evalsha' command",
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "ERR unknown command 'evalsha'",
    "ERR Error running script (call to f_1): @user_script:1: bad",
  ])("%s: no retry can heal it", (message) => {
    expect(isRefusal(new Error(message))).toBe(true);
  });

  it.each([
    "fetch failed",
    "connect ECONNREFUSED 127.0.0.1:6379",
    "Connection is closed.",
    "LOADING Redis is loading the dataset in memory",
    "ERR Redis is unreachable: connect ECONNREFUSED",
    "BUSY Redis is busy running a script",
    "no reply within 200 ms",
  ])("%s: a transport failure, worth a retry", (message) => {
    expect(isRefusal(new Error(message))).toBe(false);
  });
});

describe("isClientTimeout", () => {
  it("knows the clients' own timeouts: Redis reached, no answer in time", () => {
    expect(isClientTimeout(new Error("Command timed out"))).toBe(true); // ioredis commandTimeout
    expect(isClientTimeout(new TimeoutError())).toBe(true); // node-redis, an empty message
    expect(isClientTimeout(new SocketTimeoutError(100))).toBe(true);
    expect(isClientTimeout(new DOMException("The operation timed out.", "TimeoutError"))).toBe(true); // fetch
    expect(isClientTimeout(new Error("connect ECONNREFUSED 127.0.0.1:6379"))).toBe(false);
    expect(isClientTimeout("Command timed out")).toBe(false);
  });

  it("makes a LockRedisError say that Redis did not answer, naming the client's timeout", () => {
    expect(new LockRedisError("jobs", "release", new Error("Command timed out")).reason).toBe(
      "Redis did not answer (the client's timeout: Command timed out)",
    );
    expect(new LockRedisError("jobs", "acquire", new TimeoutError()).reason).toBe(
      "Redis did not answer (the client's timeout: TimeoutError)",
    );
  });
});

describe("redacted", () => {
  it("copies the name, a summarized message, scalar properties and stack frames, without the token", () => {
    const inner = Object.assign(new Error(`socket hang up near ${TOKEN}`), {
      code: "ECONNRESET",
      errno: -104,
    });
    const outer = Object.assign(new Error(`request for ${TOKEN} failed`, { cause: inner }), {
      name: "ReplyError",
      command: { name: "evalsha", args: [TOKEN] },
      status: 500,
    });
    const copy = redacted(outer, TOKEN) as Error & Record<string, unknown>;
    expect(copy.name).toBe("ReplyError");
    expect(copy.message).toBe("request for <token> failed");
    expect(copy.status).toBe(500);
    expect(copy.command).toBeUndefined();
    expect((copy.cause as Error & { code: string }).code).toBe("ECONNRESET");
    const text =
      JSON.stringify({ ...copy, cause: { ...(copy.cause as object) } }) +
      copy.stack +
      (copy.cause as Error).stack;
    expect(text).not.toContain(TOKEN);
    expect(copy.stack).toMatch(/^ReplyError: request for <token> failed\n\s+at /);
  });

  it("leaves no trace of the script text", () => {
    expect((redacted(upstash, TOKEN) as Error).message).not.toMatch(/allow-key-locking|redis\.call/);
  });
});

describe("isConnectionRefused", () => {
  const refused = () =>
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });

  it("finds a refused connection among the causes: fetch's, and a LockRedisError's (redacted) copy", () => {
    const fetchFailed = new TypeError("fetch failed", { cause: refused() });
    expect(isConnectionRefused(refused())).toBe(true);
    expect(isConnectionRefused(fetchFailed)).toBe(true);
    expect(isConnectionRefused(new LockRedisError("jobs", "acquire", fetchFailed))).toBe(true);
    const both = Object.assign(new AggregateError([refused(), refused()], ""), { code: "ECONNREFUSED" });
    expect(isConnectionRefused(new LockRedisError("jobs", "acquire", both))).toBe(true);
  });

  it("not a reset, a timeout, or a message that only quotes a refusal (a REST endpoint's reply)", () => {
    expect(isConnectionRefused(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(
      false,
    );
    expect(isConnectionRefused(new Error("connect ECONNREFUSED 127.0.0.1:1"))).toBe(false);
    expect(isConnectionRefused(new Error("ERR Redis is unreachable: connect ECONNREFUSED"))).toBe(false);
    expect(isConnectionRefused(new LockRedisError("jobs", "acquire", new Error("Command timed out")))).toBe(
      false,
    );
    expect(isConnectionRefused("ECONNREFUSED")).toBe(false);
  });
});
