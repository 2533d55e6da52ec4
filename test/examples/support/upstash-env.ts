import { afterAll, beforeAll, inject } from "vitest";

const NAMES = ["UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN"] as const;

/**
 * Points `Redis.fromEnv()` at the suite's server for the current test file, as a reader's deployment would,
 * and restores the variables afterwards. Import the examples after it, inside the tests.
 */
export function useUpstashEnv(): Record<(typeof NAMES)[number], string> {
  const saved = NAMES.map((name) => process.env[name]);
  const values = { UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" };
  beforeAll(() => {
    values.UPSTASH_REDIS_REST_URL = inject("upstashUrl");
    values.UPSTASH_REDIS_REST_TOKEN = inject("upstashToken");
    Object.assign(process.env, values);
  });
  afterAll(() => {
    NAMES.forEach((name, index) => {
      const value = saved[index];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    });
  });
  return values;
}
