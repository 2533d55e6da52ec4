// The overlap check, the terminal demo's (scripts/demo-worker.ts): a counter in Redis of the workers
// inside a critical section right now, raised on entering and lowered on leaving. It is checked by
// Redis itself, through the page's own client, independently of the lock and of anyone's clock.

import type { Redis } from "@upstash/redis";

/** One worker's stay inside; `leave()` may be called more than once and counts once. */
export interface Stay {
  /**
   * Lowers the counter. @returns the most workers this stay saw inside, itself included: anyone who
   * entered after it and has not left is still counted when it leaves. At most the lock's limit.
   */
  leave(): Promise<number>;
}

/**
 * The counter's client must not retry: an INCR retried after a lost reply would count twice and
 * report an overlap that never happened.
 */
export async function enter(redis: Redis, key: string): Promise<Stay> {
  const entered = await redis.incr(key);
  let left: Promise<number> | undefined;
  return {
    leave() {
      left ??= redis.decr(key).then((after) => Math.max(entered, after + 1));
      return left;
    },
  };
}
