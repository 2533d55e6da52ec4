import { describe, expect, it, type Mock, vi } from "vitest";
import type { RedisClient } from "../../src/client/redis-client";
import { scriptRunnerFor } from "../../src/client/script-runner";
import type { LuaScript } from "../../src/scripts/lua-script";

const script: LuaScript = {
  name: "test",
  source: "return 1",
  sha1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
};
const noScript = new Error("NOSCRIPT No matching script. Please use EVAL.");

/** A client shaped like one library's, with its by-SHA-1 and full-script methods as mocks. */
interface Fake {
  readonly client: RedisClient;
  readonly bySha: Mock;
  readonly eval: Mock;
  /** What the fallback EVAL must receive for `run()` below. */
  readonly evalArgs: readonly unknown[];
}

// The real clients run in test/clients; these pin down the calling conventions.
function ioredisFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { isCluster: false, defineCommand: () => {}, eval: evalFn, evalsha: bySha };
  return { client, bySha, eval: evalFn, evalArgs: [script.source, 2, "k1", "k2", "token", "250"] };
}

function nodeRedisFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalSha: bySha, EVALSHA: bySha };
  const options = { keys: ["k1", "k2"], arguments: ["token", "250"] };
  return { client, bySha, eval: evalFn, evalArgs: [script.source, options] };
}

function genericFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalsha: bySha };
  return { client, bySha, eval: evalFn, evalArgs: [script.source, ["k1", "k2"], ["token", 250]] };
}

const run = (fake: Fake) => scriptRunnerFor(fake.client).run(script, ["k1", "k2"], ["token", 250]);

describe("how each kind of client is called", () => {
  it("ioredis: key count, then keys and arguments spread, arguments as strings", async () => {
    const fake = ioredisFake();
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledWith(script.sha1, 2, "k1", "k2", "token", "250");
    expect(fake.eval).not.toHaveBeenCalled();
  });

  it("node-redis: an options object with keys and string arguments", async () => {
    const fake = nodeRedisFake();
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledWith(script.sha1, { keys: ["k1", "k2"], arguments: ["token", "250"] });
    expect(fake.eval).not.toHaveBeenCalled();
  });

  it("generic (and @upstash/redis): keys and arguments as two lists, arguments untouched", async () => {
    const fake = genericFake();
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledWith(script.sha1, ["k1", "k2"], ["token", 250]);
    expect(fake.eval).not.toHaveBeenCalled();
  });

  it("generic without evalsha: the full script with eval, called as a method of the client", async () => {
    const client = {
      calls: [] as unknown[][],
      async eval(...args: unknown[]) {
        this.calls.push(args);
        return [1];
      },
    };
    await expect(scriptRunnerFor(client).run(script, ["k1"], ["token"])).resolves.toEqual([1]);
    expect(client.calls).toEqual([[script.source, ["k1"], ["token"]]]);
  });
});

describe("NOSCRIPT fallback", () => {
  it.each([
    ["ioredis", ioredisFake],
    ["node-redis", nodeRedisFake],
    ["generic", genericFake],
  ])("%s: sends the full script once when Redis answers NOSCRIPT", async (_name, make) => {
    const fake = make([1, "2"]);
    fake.bySha.mockRejectedValueOnce(noScript);
    await expect(run(fake)).resolves.toEqual([1, 2]);
    expect(fake.eval).toHaveBeenCalledTimes(1);
    expect(fake.eval).toHaveBeenCalledWith(...fake.evalArgs);
  });

  it("matches NOSCRIPT in any case and error class (ReplyError, SimpleError, ErrorReply...)", async () => {
    class SimpleError extends Error {}
    const fake = genericFake();
    fake.bySha.mockRejectedValueOnce(new SimpleError("noscript No matching script"));
    await expect(run(fake)).resolves.toBe(1);
    expect(fake.eval).toHaveBeenCalledTimes(1);
  });

  it("passes any other error through without sending the script", async () => {
    const failure = new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    const fake = ioredisFake();
    fake.bySha.mockRejectedValueOnce(failure);
    await expect(run(fake)).rejects.toBe(failure);
    expect(fake.eval).not.toHaveBeenCalled();
  });

  it("passes the error of the fallback EVAL through", async () => {
    const failure = new Error("ERR Error running script");
    const fake = nodeRedisFake();
    fake.bySha.mockRejectedValueOnce(noScript);
    fake.eval.mockRejectedValueOnce(failure);
    await expect(run(fake)).rejects.toBe(failure);
  });
});

describe("replies", () => {
  it.each([
    ["ioredis with stringNumbers", ioredisFake(["1", "9500"]), [1, 9500]],
    ["node-redis with a typeMapping to BigInt", nodeRedisFake([1n, 9500n]), [1, 9500]],
    ["a client returning buffers", genericFake([Buffer.from("0"), Buffer.from("-2")]), [0, -2]],
    ["nil", genericFake(null), null],
  ])("are normalised: %s", async (_name, fake, expected) => {
    await expect(run(fake)).resolves.toEqual(expected);
  });

  it("that cannot be read reject with a TypeError", async () => {
    await expect(run(genericFake("OK"))).rejects.toThrow(TypeError);
  });
});
