import { describe, expect, it } from "vitest";
import { startProxy } from "../../stack/proxy/server";
import { RespConnection } from "../../stack/resp/connection";
import { connectionOptionsFromUrl } from "../../stack/resp/redis-url";
import { RespInteger } from "../../stack/resp/reply";
import { clientVariants, createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { flaggedScript, sha1Hex } from "./helpers/scripts";

// Upstash's `#!lua flags=allow-key-locking`, which the proxy emulates by default, through the real client.
// A private stack: these tests flush the script cache and count commands.
const stack = usePrivateStack();

const UNDECLARED = /ERR key '.*' used by '\w+' is not declared in KEYS; scripts flagged allow-key-locking/;
const DATABASE_WIDE = /ERR command '\w+' needs access to the whole database/;

/** A raw connection to the Redis behind the proxy, to see what Redis itself holds. */
function backend(): RespConnection {
  return new RespConnection(connectionOptionsFromUrl(stack().redisUrl));
}

describe.each(clientVariants)("allow-key-locking through @upstash/redis ($name)", ({ options }) => {
  const redis = () => createClient(stack(), options);

  it("runs a flagged script with EVAL, the flag alone or with others", async () => {
    const key = keyPrefix("flag-eval");
    await redis().set(key, "stored");
    const read = "return redis.call('GET', KEYS[1])";
    expect(await redis().eval(flaggedScript(read), [key], [])).toBe("stored");
    expect(await redis().eval(flaggedScript(read, "no-writes,allow-key-locking"), [key], [])).toBe("stored");
    expect(await redis().eval(flaggedScript(read, "allow-key-locking,no-writes"), [key], [])).toBe("stored");
    const write = "return redis.call('SET', KEYS[1], ARGV[1])";
    expect(await redis().eval(flaggedScript(write), [key], ["written"])).toBe("OK");
    expect(await redis().get(key)).toBe("written");
    // no-writes still reaches Redis, which enforces it.
    await expect(
      redis().eval(flaggedScript(write, "no-writes,allow-key-locking"), [key], ["x"]),
    ).rejects.toThrow(/Write commands are not allowed from read-only scripts/);
  });

  it("serves createScript().exec(): EVALSHA, NOSCRIPT, EVAL, then EVALSHA alone", async () => {
    const key = keyPrefix("flag-exec");
    const script = redis().createScript<string>(
      flaggedScript("return 'ran ' .. ARGV[1] .. ' on ' .. KEYS[1]"),
    );
    const { stats } = stack().proxy;
    const before = stats.commands;
    expect(await script.exec([key], ["first"])).toBe(`ran first on ${key}`);
    expect(stats.commands - before).toBe(2);
    const cached = stats.commands;
    expect(await script.exec([key], ["second"])).toBe(`ran second on ${key}`);
    expect(stats.commands - cached).toBe(1);
  });

  it("answers SCRIPT LOAD, EVALSHA and SCRIPT EXISTS with the SHA-1 of the text the client sent", async () => {
    const key = keyPrefix("flag-sha");
    await redis().set(key, "by sha");
    const source = flaggedScript("return redis.call('GET', KEYS[1])");
    const sha = sha1Hex(source);
    expect(await redis().scriptLoad(source)).toBe(sha);
    expect(await redis().evalsha(sha, [key], [])).toBe("by sha");
    expect(await redis().evalsha(sha.toUpperCase(), [key], [])).toBe("by sha");
    expect(await redis().scriptExists(sha, "f".repeat(40))).toEqual([1, 0]);
  });

  it("runs EVAL_RO and EVALSHA_RO with no-writes,allow-key-locking and rejects a write inside", async () => {
    const key = keyPrefix("flag-ro");
    await redis().set(key, "read only");
    const read = flaggedScript("return redis.call('GET', KEYS[1])", "no-writes,allow-key-locking");
    expect(await redis().evalRo(read, [key], [])).toBe("read only");
    expect(await redis().evalshaRo(await redis().scriptLoad(read), [key], [])).toBe("read only");
    const readonlyScript = redis().createScript<string, true>(read, { readonly: true });
    expect(await readonlyScript.exec([key], [])).toBe("read only");
    const write = flaggedScript("return redis.call('SET', KEYS[1], 'x')", "no-writes,allow-key-locking");
    await expect(redis().evalRo(write, [key], [])).rejects.toThrow(
      /Write commands are not allowed from read-only scripts/,
    );
    await expect(redis().evalshaRo(await redis().scriptLoad(write), [key], [])).rejects.toThrow(
      /Write commands are not allowed from read-only scripts/,
    );
    expect(await redis().get(key)).toBe("read only");
  });

  it("runs a script flagged allow-key-locking alone in shebang mode, as sent: EVAL_RO without no-writes refused", async () => {
    const key = keyPrefix("flag-mode");
    await redis().set(key, "kept");
    const read = flaggedScript("return redis.call('GET', KEYS[1])");
    // Redis 7 refuses a shebang script that may write under *_RO before running it; without its `#!lua`
    // line (compatibility mode) the read would run.
    await expect(redis().evalRo(read, [key], [])).rejects.toThrow(/write flag using \*_ro command/);
  });

  it("carries flagged scripts in a pipeline and a transaction", async () => {
    const key = keyPrefix("flag-batch");
    const source = flaggedScript("return redis.call('INCR', KEYS[1])");
    const sha = sha1Hex(source);
    expect(
      await redis().pipeline().eval(source, [key], []).scriptLoad(source).evalsha(sha, [key], []).exec(),
    ).toEqual([1, sha, 2]);
    expect(
      await redis().multi().evalsha(sha, [key], []).scriptLoad(source).eval(source, [key], []).exec(),
    ).toEqual([3, sha, 4]);
  });

  it("rejects a key not declared in KEYS, read or written, through call and pcall; declared keys pass", async () => {
    const key = keyPrefix("flag-keys");
    const other = `${key}other`;
    await redis().set(other, "untouched");
    await expect(
      redis().eval(flaggedScript("return redis.call('GET', ARGV[1])"), [key], [other]),
    ).rejects.toThrow(UNDECLARED);
    await expect(
      redis().eval(flaggedScript("return redis.call('SET', ARGV[1], 'x')"), [key], [other]),
    ).rejects.toThrow(new RegExp(`ERR key '${other}' used by 'set' is not declared in KEYS`));
    // pcall hands the refusal back as a value, and the script goes on.
    const caught = flaggedScript(
      "local reply = redis.pcall('SET', ARGV[1], 'x')\nreturn type(reply) == 'table' and ('caught ' .. reply.err) or 'ran'",
    );
    expect(await redis().eval(caught, [key], [other])).toMatch(
      /^caught ERR key '.*' used by 'set' is not declared/,
    );
    expect(await redis().get(other)).toBe("untouched");
    const declared = flaggedScript("redis.pcall('SET', KEYS[2], ARGV[1])\nreturn redis.call('GET', KEYS[2])");
    expect(await redis().eval(declared, [key, other], ["changed"])).toBe("changed");
  });

  it("rejects FLUSHDB and other database-wide commands; PUBLISH and TIME stay allowed", async () => {
    const key = keyPrefix("flag-db");
    await redis().set(key, "survives");
    for (const call of [
      "'FLUSHDB'",
      "'flushall'",
      "'KEYS', '*'",
      "'SCAN', 0",
      "'RANDOMKEY'",
      "'DBSIZE'",
      "'SWAPDB', 0, 1",
    ]) {
      await expect(redis().eval(flaggedScript(`return redis.call(${call})`), [key], [])).rejects.toThrow(
        DATABASE_WIDE,
      );
    }
    expect(await redis().get(key)).toBe("survives");
    const keyless = flaggedScript(
      "return {redis.call('PUBLISH', ARGV[1], 'm'), #redis.call('TIME'), redis.call('PING')}",
    );
    expect(await redis().eval(keyless, [], [keyPrefix("flag-channel")])).toEqual([0, 2, "PONG"]);
  });

  it("keeps the user's line numbers in Lua errors, and the client's SHA-1 in the message", async () => {
    const runtime = flaggedScript("local one = 1\nlocal boom = nil + one");
    await expect(redis().eval(runtime, [], [])).rejects.toThrow(
      new RegExp(`user_script:3: .* script: ${sha1Hex(runtime)}, on @user_script:3\\.`),
    );
    const withShebang = flaggedScript("local one = 1\nlocal boom = nil + one", "no-writes,allow-key-locking");
    await expect(redis().eval(withShebang, [], [])).rejects.toThrow(/user_script:3: .* on @user_script:3\./);
    // An error raised by redis.call is reported on the line that called it, a tail call included.
    const key = keyPrefix("flag-line");
    await redis().set(key, "text");
    const commandError = flaggedScript("local one = 1\n\nreturn redis.call('LPUSH', KEYS[1], 'x')");
    await expect(redis().eval(commandError, [key], [])).rejects.toThrow(
      new RegExp(`WRONGTYPE .* script: ${sha1Hex(commandError)}, on @user_script:4\\.`),
    );
    const refused = flaggedScript("local one = 1\nlocal value = redis.call('GET', ARGV[1])");
    await expect(redis().eval(refused, [key], [`${key}other`])).rejects.toThrow(/on @user_script:3\./);
  });

  it("leaves scripts without the flag byte for byte as sent", async () => {
    const key = keyPrefix("flag-plain");
    const connection = backend();
    try {
      for (const source of [
        `return 'plain ${key}'`,
        `#!lua flags=no-writes\r\nreturn  'héllo ✓ ${key}'\t\n`,
        `#!lua\nreturn 'shebang without flags ${key}'`,
      ]) {
        const sha = sha1Hex(source);
        expect(await redis().scriptLoad(source)).toBe(sha);
        // Redis holds the script under the same SHA-1: the text reached it unchanged.
        expect(await connection.call("SCRIPT", "EXISTS", sha)).toEqual([new RespInteger("1")]);
        expect(await redis().evalsha(sha, [], [])).toMatch(new RegExp(key));
      }
    } finally {
      connection.close();
    }
  });
});

describe("allow-key-locking under maxmemory", () => {
  it("refuses a flagged writing script before it runs, as a shebang script is (nothing of it happens)", async () => {
    const redis = createClient(stack());
    const key = keyPrefix("flag-oom");
    await redis.set(key, "kept");
    const connection = backend();
    await connection.call("CONFIG", "SET", "maxmemory", "1");
    try {
      // Compatibility mode would run the DEL (allowed under OOM), then fail at the SET: half a script.
      const script = flaggedScript(
        "redis.call('DEL', KEYS[1])\nreturn redis.call('SET', KEYS[1] .. 'x', 'y')",
      );
      await expect(redis.eval(script, [key], [])).rejects.toThrow(/OOM command not allowed/);
    } finally {
      await connection.call("CONFIG", "SET", "maxmemory", "0");
      connection.close();
    }
    expect(await redis.get(key)).toBe("kept");
  });
});

describe("allow-key-locking and the script cache", () => {
  it("answers NOSCRIPT to the client's SHA-1 after SCRIPT FLUSH, and EVAL loads the script again", async () => {
    const redis = createClient(stack());
    const source = flaggedScript("return 'loaded'");
    const sha = sha1Hex(source);
    expect(await redis.scriptLoad(source)).toBe(sha);
    await redis.scriptFlush();
    await expect(redis.evalsha(sha, [], [])).rejects.toThrow("NOSCRIPT No matching script. Please use EVAL.");
    expect(await redis.scriptExists(sha)).toEqual([0]);
    expect(await redis.createScript(source).exec([], [])).toBe("loaded");
    expect(await redis.scriptExists(sha)).toEqual([1]);
  });

  it("forwards a SHA-1 it does not know, so a script loaded through another proxy falls back to EVAL", async () => {
    const other = await startProxy({ redisUrl: stack().redisUrl });
    try {
      const source = flaggedScript("return 'from either proxy'");
      expect(await createClient(other).scriptLoad(source)).toBe(sha1Hex(source));
      const script = createClient(stack()).createScript<string>(source);
      const { stats } = stack().proxy;
      const before = stats.commands;
      expect(await script.exec([], [])).toBe("from either proxy");
      // This proxy never saw the text: EVALSHA met NOSCRIPT, then EVAL ran.
      expect(stats.commands - before).toBe(2);
    } finally {
      await other.close();
    }
  });
});
