import { describe, expect, it } from "vitest";
import { clientVariants, createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { flaggedScript, sha1Hex } from "./helpers/scripts";

// scriptFlags: "accept" takes the flag out and answers to the client's SHA-1, like "emulate", but without
// the key guard: what the benchmark runs, so that the guard's Lua does not slow flagged scripts there.
const stack = usePrivateStack({ scriptFlags: "accept" });

describe.each(clientVariants)("scriptFlags: accept through @upstash/redis ($name)", ({ options }) => {
  const redis = () => createClient(stack(), options);

  it("runs a flagged script, by text and by the SHA-1 of the text as sent", async () => {
    const key = keyPrefix("accept");
    const source = flaggedScript(`return redis.call("SET", KEYS[1], ARGV[1])`);
    expect(await redis().eval(source, [key], ["v"])).toBe("OK");
    expect(await redis().evalsha(sha1Hex(source), [key], ["w"])).toBe("OK");
    expect(await redis().scriptLoad(source)).toBe(sha1Hex(source));
    expect(await redis().scriptExists(sha1Hex(source))).toEqual([1]);
  });

  it("does not check keys: an undeclared key goes through", async () => {
    const key = keyPrefix("accept-undeclared");
    const source = flaggedScript(`return redis.call("SET", KEYS[1] .. ":other", "x")`);
    expect(await redis().eval(source, [key], [])).toBe("OK");
  });

  it("keeps line numbers: the shebang's line stays, without the flag", async () => {
    const source = flaggedScript(`local a = 1\nerror("boom")`);
    await expect(redis().eval(source, [], [])).rejects.toThrow(/user_script:3/);
  });
});
