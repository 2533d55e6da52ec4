/** What a lock under test and a later caller can show after an acquisition that should have held. */
export interface HeldThenFree {
  readonly outcome: string;
  readonly held: boolean;
  readonly free: boolean;
}

/**
 * What an acquisition that held a live lease, and left nothing behind once released, shows (no unhandled
 * rejection either, where a test adds what it tracked).
 */
export const ACQUIRED_THEN_FREE = { outcome: "acquired", held: true, free: true, unhandled: [] };

/**
 * Settles `pending` (an acquisition of `lock`, as a string: "acquired" or why not), reads whether `lock` holds
 * a live lease, releases it, then whether a `fresh` caller takes the lock at once: nothing of an undone try
 * is left behind.
 */
export async function heldThenFree(
  lock: { readonly remainingMs: number; release(): Promise<boolean> },
  pending: Promise<string>,
  fresh: () => {
    acquire(config: { retry: { attempts: number } }): Promise<boolean>;
    release(): Promise<boolean>;
  },
): Promise<HeldThenFree> {
  const outcome = await pending;
  const held = lock.remainingMs > 100;
  await lock.release();
  const next = fresh();
  const free = await next.acquire({ retry: { attempts: 1 } });
  await next.release();
  return { outcome, held, free };
}
