import { describe, expect, it } from "vitest";
import { createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { flaggedScript } from "./helpers/scripts";

// How the proxy finds the keys of the commands a script flagged allow-key-locking calls: Redis's own key
// specs, movable keys included. Proxy-only behaviour, so a stack of its own.
const stack = usePrivateStack();
const redis = () => createClient(stack());

describe("the key guard of allow-key-locking", () => {
  // `$KEY` is the key under test: undeclared as ARGV[1], declared as KEYS[3].
  it.each([
    ["ZUNIONSTORE's counted keys", "redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], $KEY)", "zunionstore"],
    [
      "XREAD's keys after STREAMS",
      "redis.call('XREAD', 'COUNT', 1, 'STREAMS', KEYS[1], $KEY, '0', '0')",
      "xread",
    ],
    ["MSET's every other argument", "redis.call('MSET', KEYS[1], 'a', $KEY, 'b')", "mset"],
    ["OBJECT ENCODING's key after a subcommand", "redis.call('OBJECT', 'ENCODING', $KEY)", "object encoding"],
    [
      "GEORADIUS's optional STORE key",
      "redis.call('GEORADIUS', KEYS[1], 0, 0, 1, 'km', 'STORE', $KEY)",
      "georadius",
    ],
    ["RENAME's second key", "redis.call('SET', KEYS[1], 'v')\nredis.call('RENAME', KEYS[1], $KEY)", "rename"],
  ])("finds %s", async (_name, call, label) => {
    const key = keyPrefix("guard");
    const keys = [`${key}a`, `${key}b`];
    const undeclared = `${key}undeclared`;
    await expect(
      redis().eval(flaggedScript(`${call.replace("$KEY", "ARGV[1]")}\nreturn 'ran'`), keys, [undeclared]),
    ).rejects.toThrow(`ERR key '${undeclared}' used by '${label}' is not declared in KEYS`);
    const declared = flaggedScript(`${call.replace("$KEY", "KEYS[3]")}\nreturn 'ran'`);
    expect(await redis().eval(declared, [...keys, undeclared], [])).toBe("ran");
  });

  it("lets GEORADIUS through without STORE, which names no second key", async () => {
    const script = flaggedScript("return redis.call('GEORADIUS', KEYS[1], 0, 0, 1, 'km')");
    expect(await redis().eval(script, [keyPrefix("guard-geo")], [])).toEqual([]);
  });

  it("refuses SORT, whose BY and GET patterns name keys the proxy cannot see", async () => {
    await expect(
      redis().eval(flaggedScript("return redis.call('SORT', KEYS[1])"), [keyPrefix("guard-sort")], []),
    ).rejects.toThrow("ERR the local proxy cannot tell which keys command 'sort' touches");
  });

  it("refuses a command named only at run time, which it cannot check", async () => {
    await expect(
      redis().eval(
        flaggedScript("return redis.call(ARGV[1], KEYS[1])"),
        [keyPrefix("guard-dynamic")],
        ["get"],
      ),
    ).rejects.toThrow("ERR the local proxy cannot check command 'get' under allow-key-locking");
  });

  it("leaves commands that Redis refuses in any script to Redis", async () => {
    await expect(
      redis().eval(flaggedScript("return redis.call('EVAL', 'return 1', 0)"), [], []),
    ).rejects.toThrow(/This Redis command is not allowed from script/);
  });

  it("allows SPUBLISH, whose shard channel is not a key", async () => {
    const script = flaggedScript("return redis.call('SPUBLISH', ARGV[1], 'm')");
    expect(await redis().eval(script, [], [keyPrefix("guard-shard")])).toBe(0);
  });

  it("gives a working redis.call again after the script caught a failure with pcall", async () => {
    const key = keyPrefix("guard-pcall");
    const script = flaggedScript(
      "local ok = pcall(redis.call, 'GET', ARGV[1])\nreturn {ok and 1 or 0, redis.call('SET', KEYS[1], 'after')}",
    );
    expect(await redis().eval(script, [key], [`${key}undeclared`])).toEqual([0, "OK"]);
  });

  it("leaves the rest of the redis table to Redis", async () => {
    const script = flaggedScript(
      "return {redis.sha1hex('x'), redis.status_reply('fine')['ok'], redis.error_reply('bad')['err']}",
    );
    expect(await redis().eval(script, [], [])).toEqual([
      "11f6ad8ec52a2984abaafd7c3b516503785c2072",
      "fine",
      "ERR bad",
    ]);
  });
});
