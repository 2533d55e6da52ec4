import { describe, expect, inject, it } from "vitest";
import { clientVariants, createClient, type Endpoint } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";

const endpoint: Endpoint = { url: inject("upstashUrl"), token: inject("upstashToken") };

describe.each(clientVariants)("hundreds of concurrent calls ($name)", ({ options }) => {
  const redis = createClient(endpoint, options);

  it("counts 500 concurrent INCRs exactly", async () => {
    const key = keyPrefix("incr");
    const results = await Promise.all(Array.from({ length: 500 }, () => redis.incr(key)));
    expect(results.sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, index) => index + 1));
    expect(await redis.get(key)).toBe(500);
  });

  it("keeps each of 300 concurrent pipelines' replies with its own commands", async () => {
    const prefix = keyPrefix("pipelines");
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, index) =>
        redis.pipeline().set(`${prefix}${index}`, `v${index}`).get(`${prefix}${index}`).exec(),
      ),
    );
    results.forEach((result, index) => {
      expect(result).toEqual(["OK", `v${index}`]);
    });
  });
});
