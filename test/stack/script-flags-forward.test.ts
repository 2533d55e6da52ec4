import { describe, expect, it } from "vitest";
import type { ScriptFlagsMode } from "../../stack/proxy/scripts/script-gateway";
import { startProxy } from "../../stack/proxy/server";
import { clientVariants, createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { flaggedScript, sha1Hex } from "./helpers/scripts";

// scriptFlags: "forward" behaves like serverless-redis-http: scripts reach Redis untouched, so Redis judges
// the flag. A library that sends allow-key-locking tests its fallback against this.
const stack = usePrivateStack({ scriptFlags: "forward" });

const UNEXPECTED_FLAG = "ERR Unexpected flag in script shebang: allow-key-locking";

describe.each(clientVariants)("scriptFlags: forward through @upstash/redis ($name)", ({ options }) => {
  const redis = () => createClient(stack(), options);

  it("passes Redis's own rejection of the flag to the client", async () => {
    const source = flaggedScript("return 1");
    await expect(redis().eval(source, [], [])).rejects.toThrow(UNEXPECTED_FLAG);
    await expect(redis().scriptLoad(source)).rejects.toThrow(UNEXPECTED_FLAG);
    await expect(redis().createScript(source).exec([], [])).rejects.toThrow(UNEXPECTED_FLAG);
    await expect(
      redis().evalRo(flaggedScript("return 1", "no-writes,allow-key-locking"), [], []),
    ).rejects.toThrow(UNEXPECTED_FLAG);
  });

  it("still runs scripts without the flag", async () => {
    const key = keyPrefix("forward");
    const source = `return redis.call('SET', KEYS[1], ARGV[1])`;
    expect(await redis().eval(source, [key], ["v"])).toBe("OK");
    expect(await redis().scriptLoad(source)).toBe(sha1Hex(source));
  });
});

describe("the scriptFlags option", () => {
  it("rejects an unknown mode", async () => {
    await expect(
      startProxy({ redisUrl: stack().redisUrl, scriptFlags: "strip" as ScriptFlagsMode }),
    ).rejects.toThrow(TypeError);
  });
});
