import type { TestProject } from "vitest/node";
import { startLocalStack } from "../../stack/local-stack";

/**
 * Vitest global setup: provides `upstashUrl`, `upstashToken` and `redisUrl` to every test file.
 *
 * With both `UPSTASH_REDIS_REST_URL` and `UPSTASH_REDIS_REST_TOKEN` set, the suite runs against that server
 * and nothing is started (`redisUrl` is then ""). Otherwise a throwaway redis-server (on a free port, never
 * 6379) and the local REST proxy are started here and stopped after the run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.UPSTASH_REDIS_REST_URL;
  const token = process.env.UPSTASH_REDIS_REST_TOKEN;
  if (url && token) {
    project.provide("upstashUrl", url);
    project.provide("upstashToken", token);
    project.provide("redisUrl", "");
    return async () => undefined;
  }
  const stack = await startLocalStack();
  project.provide("upstashUrl", stack.url);
  project.provide("upstashToken", stack.token);
  project.provide("redisUrl", stack.redisUrl);
  return () => stack.stop();
}
