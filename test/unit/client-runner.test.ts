import { describe, expect, it, type Mock, vi } from "vitest";
import { scriptRunnerFor } from "../../src/client/script-runner";
import type { RedisClient } from "../../src/client/types";
import { defineScript, KEY_LOCKING_SHEBANG } from "../../src/scripts/script";

// The SHA-1 values are those of the two texts; test/unit/scripts.test.ts checks the library's own.
const script = defineScript({
  name: "test",
  source: "return 1",
  sha1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
  keyLockedSha1: "e7d3065bbe862e0ef8706b37e94e4260d9d3bbc3",
});
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
  return { client, bySha, eval: evalFn, evalArgs: [script.source, ...rest], shaArgs: [script.sha1, ...rest] };
}

function nodeRedisFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalSha: bySha, EVALSHA: bySha };
  const options = { keys: ["k1", "k2"], arguments: ["token", "250"] };
  return { client, bySha, eval: evalFn, evalArgs: [script.source, options], shaArgs: [script.sha1, options] };
}

function genericFake(reply: unknown = 1): Fake {
  const bySha = vi.fn(async () => reply);
  const evalFn = vi.fn(async () => reply);
  const client = { eval: evalFn, evalsha: bySha };
  const rest = [
    ["k1", "k2"],
    ["token", 250],
  ];
  return { client, bySha, eval: evalFn, evalArgs: [script.source, ...rest], shaArgs: [script.sha1, ...rest] };
}

const run = (fake: Fake, keyLocking = false) =>
  scriptRunnerFor(fake.client, keyLocking).run(script, ["k1", "k2"], ["token", 250]);

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
    await expect(runner.run(script, ["k1"], ["token"])).resolves.toEqual([1]);
    await expect(runner.run(script, ["k1"], ["token"])).resolves.toEqual([1]);
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
    expect(fake.bySha).toHaveBeenCalledWith(script.keyLocked.sha1, ["k1", "k2"], ["token", 250]);
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
