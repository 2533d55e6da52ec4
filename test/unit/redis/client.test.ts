import { createHash } from "node:crypto";
import { Redis as UpstashRedis } from "@upstash/redis";
import { Cluster, Redis as IoRedis } from "ioredis";
import { createClient, createCluster } from "redis";
import { afterAll, describe, expect, it, type Mock, vi } from "vitest";
import { assertRedisClient, clientKind, type RedisClient, scriptRunnerFor } from "../../../src/redis/client";
import { defineScript, KEY_LOCKING_SHEBANG } from "../../../src/scripts/script";

const script = defineScript("test", "return 1");
const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
const plainSha1 = sha1("return 1");
const keyLockedSha1 = sha1(`${KEY_LOCKING_SHEBANG}return 1`);
const noScript = new Error("NOSCRIPT No matching script. Please use EVAL.");

/** A client shaped like one library's, with its by-SHA-1 and full-script methods as mocks. */
interface Fake {
  readonly client: RedisClient;
  readonly bySha: Mock;
  readonly eval: Mock;
  /** What EVAL must receive for `run()` below, and EVALSHA after the script. */
  readonly evalArgs: readonly unknown[];
  readonly shaArgs: readonly unknown[];
}

// The real clients run in test/clients; these pin down the calling conventions.
function ioredisFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { isCluster: false, defineCommand: () => {}, eval: evalFn, evalsha: bySha };
  const rest = [2, "k1", "k2", "token", "250"];
  return { client, bySha, eval: evalFn, evalArgs: [script.source, ...rest], shaArgs: [plainSha1, ...rest] };
}

function nodeRedisFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalSha: bySha, EVALSHA: bySha };
  const options = { keys: ["k1", "k2"], arguments: ["token", "250"] };
  return { client, bySha, eval: evalFn, evalArgs: [script.source, options], shaArgs: [plainSha1, options] };
}

function genericFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalsha: bySha };
  const rest = [
    ["k1", "k2"],
    ["token", 250],
  ];
  return { client, bySha, eval: evalFn, evalArgs: [script.source, ...rest], shaArgs: [plainSha1, ...rest] };
}

const run = (fake: Fake, keyLocking = false) =>
  scriptRunnerFor(fake.client, keyLocking)(script, ["k1", "k2"], ["token", 250]);

/** A fake whose script cache already holds the script: the runner has sent it once. */
async function warmed(make: (reply?: unknown) => Fake, reply?: unknown): Promise<Fake> {
  const fake = make(reply);
  await run(fake);
  fake.eval.mockClear();
  fake.bySha.mockClear();
  return fake;
}

const kinds = [
  ["ioredis", ioredisFake],
  ["node-redis", nodeRedisFake],
  ["generic (and @upstash/redis)", genericFake],
] as const;

describe("how each kind of client is called", () => {
  it.each(kinds)("%s: the first run sends the script in full, later runs its SHA-1", async (_name, make) => {
    const fake = make();
    await run(fake);
    expect(fake.eval).toHaveBeenCalledWith(...fake.evalArgs);
    expect(fake.bySha).not.toHaveBeenCalled();
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledWith(...fake.shaArgs);
    expect(fake.eval).toHaveBeenCalledTimes(1);
  });

  it("generic without evalsha: the full script with eval, called as a method of the client", async () => {
    const client = {
      calls: [] as unknown[][],
      async eval(...args: unknown[]) {
        this.calls.push(args);
        return [1];
      },
    };
    const runner = scriptRunnerFor(client, false);
    await expect(runner(script, ["k1"], ["token"])).resolves.toEqual([1]);
    await expect(runner(script, ["k1"], ["token"])).resolves.toEqual([1]);
    expect(client.calls).toEqual([
      [script.source, ["k1"], ["token"]],
      [script.source, ["k1"], ["token"]],
    ]);
  });
});

describe("NOSCRIPT fallback", () => {
  it.each(kinds)("%s: sends the full script once when Redis answers NOSCRIPT", async (_name, make) => {
    const fake = await warmed(make, [1, "2"]);
    fake.bySha.mockRejectedValueOnce(noScript);
    await expect(run(fake)).resolves.toEqual([1, 2]);
    expect(fake.eval).toHaveBeenCalledTimes(1);
    expect(fake.eval).toHaveBeenCalledWith(...fake.evalArgs);
  });

  it("matches NOSCRIPT in any case and error class (ReplyError, SimpleError, ErrorReply...)", async () => {
    class SimpleError extends Error {}
    const fake = await warmed(genericFake);
    fake.bySha.mockRejectedValueOnce(new SimpleError("noscript No matching script"));
    await expect(run(fake)).resolves.toBe(1);
    expect(fake.eval).toHaveBeenCalledTimes(1);
  });

  it("calls started after a NOSCRIPT send the text, not a SHA-1 that would meet NOSCRIPT too", async () => {
    const fake = await warmed(genericFake);
    fake.bySha.mockRejectedValueOnce(noScript);
    let land = (_reply: unknown) => {};
    fake.eval.mockImplementationOnce(() => new Promise((resolve) => (land = resolve)));
    const first = run(fake);
    await vi.waitFor(() => expect(fake.eval).toHaveBeenCalledTimes(1), { timeout: 1000 });
    // The server lost its scripts; until the first fallback lands, another EVALSHA would cost two commands.
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledTimes(1);
    expect(fake.eval).toHaveBeenCalledTimes(2);
    land(1);
    await expect(first).resolves.toBe(1);
    await run(fake);
    expect(fake.bySha).toHaveBeenCalledTimes(2);
    expect(fake.eval).toHaveBeenCalledTimes(2);
  });

  it("passes any other error through without sending the script", async () => {
    const failure = new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    const fake = await warmed(ioredisFake);
    fake.bySha.mockRejectedValueOnce(failure);
    await expect(run(fake)).rejects.toBe(failure);
    expect(fake.eval).not.toHaveBeenCalled();
  });

  it("passes the error of the fallback EVAL through", async () => {
    const failure = new Error("ERR Error running script");
    const fake = await warmed(nodeRedisFake);
    fake.bySha.mockRejectedValueOnce(noScript);
    fake.eval.mockRejectedValueOnce(failure);
    await expect(run(fake)).rejects.toBe(failure);
  });

  it("a first run that fails is not taken as cached: the next run sends the script again", async () => {
    const fake = genericFake();
    fake.eval.mockRejectedValueOnce(new Error("fetch failed"));
    await expect(run(fake)).rejects.toThrow("fetch failed");
    await run(fake);
    expect(fake.eval).toHaveBeenCalledTimes(2);
    expect(fake.bySha).not.toHaveBeenCalled();
  });
});

describe("Upstash's key-locking shebang", () => {
  it("key-locked runs send the text behind the shebang, then its own SHA-1", async () => {
    const fake = genericFake();
    await run(fake, true);
    await run(fake, true);
    expect(fake.eval).toHaveBeenCalledWith(`${KEY_LOCKING_SHEBANG}return 1`, ["k1", "k2"], ["token", 250]);
    expect(fake.bySha).toHaveBeenCalledWith(keyLockedSha1, ["k1", "k2"], ["token", 250]);
    expect(script.keyLocked.source.split("\n")[0]).toBe("#!lua flags=allow-key-locking");
  });

  it.each([
    ["Redis 7 and Valkey", "ERR Unexpected flag in script shebang: allow-key-locking"],
    ["Redis 6", "ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'"],
  ])("a refusal (%s) costs one request, once per client; plain scripts from then on", async (_name, text) => {
    const fake = genericFake();
    fake.eval.mockImplementation(async (source: string) => {
      if (source.startsWith("#!")) throw new Error(text);
      return 1;
    });
    await expect(run(fake, true)).resolves.toBe(1);
    expect(fake.eval.mock.calls.map(([source]) => source)).toEqual([script.keyLocked.source, script.source]);
    // Another lock on the same client, key-locked too: nothing flagged is sent again.
    await expect(run(fake, true)).resolves.toBe(1);
    expect(fake.bySha).toHaveBeenCalledWith(...fake.shaArgs);
    expect(fake.eval).toHaveBeenCalledTimes(2);
  });

  it("passes any other error of a key-locked run through, and keeps the flag", async () => {
    const fake = genericFake();
    const failure = new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    fake.eval.mockRejectedValueOnce(failure);
    await expect(run(fake, true)).rejects.toBe(failure);
    await run(fake, true);
    expect(fake.eval).toHaveBeenLastCalledWith(script.keyLocked.source, ["k1", "k2"], ["token", 250]);
  });
});

describe("SHA-1s", () => {
  it("are those of the exact texts sent, computed once", async () => {
    expect(await script.sha1()).toBe(plainSha1);
    expect(await script.keyLocked.sha1()).toBe(keyLockedSha1);
    expect(script.sha1()).toBe(script.sha1());
  });
});

describe("replies", () => {
  it.each([
    ["ioredis with stringNumbers", ioredisFake(["1", "9500"]), [1, 9500]],
    ["node-redis with a typeMapping to BigInt", nodeRedisFake([1n, 9500n]), [1, 9500]],
    ["a client returning buffers", genericFake([Buffer.from("0"), Buffer.from("-2")]), [0, -2]],
    ["nil inside a list", genericFake([0, null]), [0, null]],
  ])("are normalised: %s", async (_name, fake, expected) => {
    await expect(run(fake)).resolves.toEqual(expected);
  });

  // No script of the library's returns nil: a client that gave a request up itself made one up (@upstash/redis
  // with an aborted `signal`, helper-90): read as "no", a free lock read as held, a held one as lost.
  it("of nil as a whole reject as a request the client gave up on", async () => {
    await expect(run(genericFake(null))).rejects.toMatchObject({ name: "GivenUpError" });
  });
});

// Real client objects that never connect: detection must work on the libraries' own objects,
// not only on fakes shaped after them. The annotations check that each one is a RedisClient.
const upstash: RedisClient = new UpstashRedis({
  url: "http://127.0.0.1:1",
  token: "t",
  enableTelemetry: false,
});
const ioredis: RedisClient = new IoRedis({ lazyConnect: true });
const ioredisCluster: RedisClient = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
const nodeRedis: RedisClient = createClient();
const nodeRedisCluster: RedisClient = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] });

afterAll(() => {
  (ioredis as IoRedis).disconnect();
  (ioredisCluster as Cluster).disconnect();
});

describe("clientKind", () => {
  it.each([
    ["@upstash/redis", upstash, "eval"],
    ["ioredis Redis", ioredis, "ioredis"],
    ["ioredis Cluster", ioredisCluster, "ioredis"],
    ["node-redis createClient", nodeRedis, "node-redis"],
    ["node-redis createCluster", nodeRedisCluster, "node-redis"],
    ["node-redis withTypeMapping", createClient().withTypeMapping({}), "node-redis"],
  ])("recognises %s", (_name, client, kind) => {
    expect(clientKind(client)).toBe(kind);
  });

  it("takes any other object with eval as a generic client", () => {
    expect(clientKind({ eval: async () => 1 })).toBe("eval");
    expect(clientKind({ eval: async () => 1, evalsha: async () => 1 })).toBe("eval");
  });

  it("does not take a generic client for ioredis or node-redis on one marker alone", () => {
    expect(clientKind({ eval: async () => 1, evalsha: async () => 1, isCluster: false })).toBe("eval");
    expect(clientKind({ eval: async () => 1, isCluster: "no", defineCommand: () => {} })).toBe("eval");
    expect(clientKind({ eval: async () => 1, evalSha: async () => 1 })).toBe("eval");
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "redis://localhost"],
    ["an object without eval", {}],
    ["an object whose eval is not a function", { eval: 1 }],
    ["a function", () => {}],
  ])("rejects %s", (_name, value) => {
    expect(clientKind(value)).toBeUndefined();
  });
});

describe("assertRedisClient", () => {
  it.each([
    [undefined, /got undefined$/],
    [null, /got null$/],
    ["redis://localhost", /got "redis:\/\/localhost"$/],
    [{ evalsha: async () => 1 }, /got an object$/],
    [[], /got an array$/],
  ])("throws a TypeError naming `redis` and the value for %o", (value, described) => {
    expect(() => assertRedisClient("redis", value)).toThrow(TypeError);
    expect(() => assertRedisClient("redis", value)).toThrow(/^Expected `redis` to be a Redis client.*eval/);
    expect(() => assertRedisClient("redis", value)).toThrow(described);
  });

  it("accepts every supported client", () => {
    for (const client of [upstash, ioredis, ioredisCluster, nodeRedis, nodeRedisCluster]) {
      expect(() => assertRedisClient("redis", client)).not.toThrow();
    }
  });
});
