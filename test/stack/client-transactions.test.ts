import { describe, expect, inject, it } from "vitest";
import { clientVariants, createClient, type Endpoint } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";

const endpoint: Endpoint = { url: inject("upstashUrl"), token: inject("upstashToken") };

describe.each(clientVariants)("multi-exec through @upstash/redis ($name)", ({ options }) => {
  const redis = createClient(endpoint, options);

  it("runs a transaction", async () => {
    const key = keyPrefix("tx");
    expect(await redis.multi().set(key, "v").get(key).incr(`${key}n`).exec()).toEqual(["OK", "v", 1]);
  });

  it("keeps ~20 concurrent transactions atomic and apart", async () => {
    const key = keyPrefix("tx-concurrent");
    const results = await Promise.all(
      Array.from({ length: 20 }, () => redis.multi().incr(key).get(key).exec<[number, number]>()),
    );
    for (const [incremented, read] of results) {
      expect(read).toBe(incremented);
    }
    expect(results.map(([incremented]) => incremented).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
  });

  it("reports a runtime error inside EXEC as an entry while the other commands run", async () => {
    const key = keyPrefix("tx-runtime");
    const results = await redis.multi().set(key, "a").incr(key).get(key).exec({ keepErrors: true });
    expect(results).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "ERR value is not an integer or out of range" },
      { result: "a", error: undefined },
    ]);
    await expect(redis.multi().set(key, "a").incr(key).exec()).rejects.toThrow(/Command 2 \[ incr \] failed/);
  });

  it("throws EXECABORT when a command is rejected at queue time, and runs nothing", async () => {
    const key = keyPrefix("tx-abort");
    // MSET with no pairs is an arity error, detected when the command is queued.
    await expect(redis.multi().set(key, "v").mset({}).exec()).rejects.toThrow(/EXECABORT/);
    expect(await redis.exists(key)).toBe(0);
  });
});
