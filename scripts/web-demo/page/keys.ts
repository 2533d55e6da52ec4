// The Redis keys one run of the page uses, and the short fingerprints it shows instead of tokens.

import type { SlotKeys } from "./fenced-store";

/**
 * The library's name for a key that belongs with `id` (its fence counter, fair line, permits), for
 * an id without braces: `{id}<suffix>`, as `companionKey` in src/keys.ts names it. The package does
 * not export that function, and the page loads only the package, so the one case it needs is here.
 */
function companion(id: string, suffix: string): string {
  return `{${id}}${suffix}`;
}

export interface RunKeys {
  /** The lock's id, also its key: `web-demo:<8 hex>`, unique per run, without braces. */
  readonly id: string;
  /** The keys that hold the lock or the semaphore's permits, which the page watches. */
  readonly holders: readonly string[];
  /** The fair line: a sorted set of waiters in arrival order (see src/permits/queue.ts). */
  readonly queue: string;
  /** The overlap check's counter of workers inside a critical section. */
  readonly inside: string;
  /** The fenced store, one slot per permit (one for a lock): see fenced-store.ts. */
  readonly store: readonly SlotKeys[];
  /** Everything the run may have written, to delete when it ends. */
  readonly all: readonly string[];
}

export function runKeys(semaphoreLimit: number | undefined): RunKeys {
  const id = `web-demo:${crypto.randomUUID().slice(0, 8)}`;
  const permits = Array.from({ length: semaphoreLimit ?? 0 }, (_, i) => companion(id, `:permit:${i + 1}`));
  const holders = semaphoreLimit === undefined ? [id] : permits;
  const queue = companion(id, ":queue");
  const inside = `${id}:inside`;
  const store = (semaphoreLimit === undefined ? [id] : permits).map((_, i) => ({
    fence: `${id}:store:${i + 1}:fence`,
    value: `${id}:store:${i + 1}:value`,
  }));
  const library = [":fence", ":receipt", ":receipts", ":queue-deadlines", ":queue-places"].map((suffix) =>
    companion(id, suffix),
  );
  const all = [
    id,
    ...permits,
    queue,
    ...library,
    inside,
    ...store.flatMap(({ fence, value }) => [fence, value]),
  ];
  return { id, holders, queue, inside, store, all };
}

const fingerprints = new Map<string, Promise<string>>();

/** The first 4 hex digits of the token's SHA-1: enough to tell holders apart, useless to take over. */
export function fingerprint(token: string): Promise<string> {
  let known = fingerprints.get(token);
  if (!known) {
    known = crypto.subtle
      .digest("SHA-1", new TextEncoder().encode(token))
      .then((hash) =>
        [...new Uint8Array(hash, 0, 2)].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
      );
    // Tokens are per acquisition: keep the recent ones only.
    if (fingerprints.size > 500) fingerprints.clear();
    fingerprints.set(token, known);
  }
  return known;
}
