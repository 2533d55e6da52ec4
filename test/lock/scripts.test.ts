import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";
import { allScripts, sha1 } from "../support/scripts";

/** The SHA-1 the library computes for a script text (with Web Crypto, asynchronously). */
async function libraryDigest(text: { sha1(): Promise<string | undefined> }): Promise<string | undefined> {
  return text.sha1();
}

describe("script SHA-1s against Redis", () => {
  const redis = newRedis();

  it.each(Object.entries(allScripts))(
    "SCRIPT LOAD of %s returns the SHA-1 the library sends by",
    async (_name, script) => {
      const loaded = await redis.scriptLoad(script.source);
      expect(loaded).toBe(sha1(script.source));
      expect(await libraryDigest(script)).toBe(loaded);
      // The key-locked form (what Upstash gets) is a script of its own, with its own SHA-1.
      const keyLocked = await redis.scriptLoad(script.keyLocked.source);
      expect(keyLocked).toBe(sha1(script.keyLocked.source));
      expect(await libraryDigest(script.keyLocked)).toBe(keyLocked);
    },
  );

  it("SCRIPT EXISTS finds every script of a lock cycle, in the key-locked form Upstash gets", async () => {
    const lock = new Lock({ id: uniqueId("exists"), redis });
    await lock.acquire();
    await lock.extend(100);
    await lock.getStatus();
    await lock.release();
    const { takeLock, extendLock, renewLock, releaseLock } = allScripts;
    const sent = [takeLock, extendLock, renewLock, releaseLock].map((script) =>
      sha1(script.keyLocked.source),
    );
    expect(await redis.scriptExists(...sent)).toEqual([1, 1, 1, 1]);
  });
});
