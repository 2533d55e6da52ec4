import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { inject } from "vitest";

/**
 * A real @upstash/redis client for the suite's server. Retries and telemetry are off unless a
 * test asks otherwise: a test about retries must opt in, and nothing should phone home.
 */
export function newRedis(overrides: Partial<RedisConfigNodejs> = {}): Redis {
  return new Redis({
    url: inject("upstashUrl"),
    token: inject("upstashToken"),
    retry: false,
    enableTelemetry: false,
    ...overrides,
  });
}

let counter = 0;

/** A key no other test (or earlier run) uses, so tests can share one Redis without flushing it. */
export function uniqueId(label: string): string {
  counter += 1;
  return `test:${label}:${process.pid}:${counter}:${crypto.randomUUID().slice(0, 8)}`;
}
