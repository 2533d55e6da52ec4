import { runChild } from "./children";
import type { ScaleResult, ScaleWorkerConfig } from "./scale-worker";

export interface ScaleResults {
  readonly transport: "ioredis";
  readonly results: ScaleResult[];
}

/** Section 6: ours and redis-semaphore, each in a fresh process with --expose-gc. */
export async function measureScale(
  redisUrl: string,
  keyBase: string,
  shape: { count: number; leaseMs: number; intervalMs: number; windowMs: number },
): Promise<ScaleResults> {
  const results: ScaleResult[] = [];
  for (const variant of ["ours", "semaphore"] as const) {
    const config: ScaleWorkerConfig = { redisUrl, variant, keyBase, concurrency: 500, ...shape };
    results.push(
      await runChild<ScaleResult>("./scale-worker.ts", config, {
        nodeArgs: ["--expose-gc"],
        timeoutMs: 300_000,
      }),
    );
  }
  return { transport: "ioredis", results };
}
