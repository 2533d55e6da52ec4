import { vi } from "vitest";

/**
 * Advances fake timers 10 ms at a time until `promise` settles (at most 100 s of fake time), then returns
 * it: a wait that never ends fails its test instead of hanging it.
 */
export async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false;
  const result = promise.finally(() => {
    done = true;
  });
  for (let step = 0; step < 10_000 && !done; step++) await vi.advanceTimersByTimeAsync(10);
  return result;
}
