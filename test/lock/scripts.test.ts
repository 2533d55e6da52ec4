import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { allScripts } from "../../src/scripts/all";
import { newRedis, uniqueId } from "../support/redis";

describe("script SHA-1 literals against Redis", () => {
  const redis = newRedis();

  it.each(allScripts.map((script) => [script.name, script] as const))(
    "SCRIPT LOAD of %s returns the literal",
    async (_name, script) => {
      expect(await redis.scriptLoad(script.source)).toBe(script.sha1);
    },
  );

  it("SCRIPT EXISTS finds every script after a lock cycle", async () => {
    const lock = new Lock({ id: uniqueId("exists"), redis });
    await lock.acquire();
    await lock.extend(100);
    await lock.getStatus();
    await lock.release();
    const known = await redis.scriptExists(...allScripts.slice(0, 4).map((script) => script.sha1));
    expect(known).toEqual([1, 1, 1, 1]);
  });
});
