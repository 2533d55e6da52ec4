// The resource the lock protects, as fencing wants it: a store that remembers the highest fencing
// token it accepted and refuses a write carrying a smaller one. A holder that lost its lease without
// noticing (the frozen worker) writes with its old token, and the store turns it away.
//
// A semaphore's permits each guard a resource of their own (a slot), with a store of its own: its
// holders hold at once, and a holder with an older token writing after one with a newer token is no
// stale writer when each writes to its own slot. A lock has one slot.

import type { Redis } from "@upstash/redis";

/**
 * Writes `ARGV[2]` unless a newer holder already wrote. In one script, so the check and the write
 * cannot be split by another writer; safe to run twice (the same write again is accepted again).
 * KEYS[1]: the highest fencing token accepted so far. KEYS[2]: the stored value.
 * ARGV[1]: the writer's fencing token (decimal). ARGV[2]: the value.
 * Returns {1, token} when written, {0, highest accepted} when refused.
 */
const writeIfNotStale = `
local highest = tonumber(redis.call("GET", KEYS[1]) or "0")
local token = tonumber(ARGV[1])
if token < highest then return {0, highest} end
redis.call("SET", KEYS[1], ARGV[1])
redis.call("SET", KEYS[2], ARGV[2])
return {1, token}
`;

export interface WriteResult {
  readonly accepted: boolean;
  /** The highest token the store had accepted when it answered. */
  readonly highest: number;
}

/** The keys of one slot's store. */
export interface SlotKeys {
  /** The highest fencing token the slot accepted. */
  readonly fence: string;
  readonly value: string;
}

export class FencedStore {
  accepted = 0;
  refused = 0;
  readonly #redis: Redis;
  readonly #slots: readonly SlotKeys[];
  /** Per slot, the highest token accepted, as far as this page saw (all the run's writers are in it). */
  readonly #highest: number[];
  readonly #onAccepted = new Set<() => void>();

  constructor(redis: Redis, slots: readonly SlotKeys[]) {
    this.#redis = redis;
    this.#slots = slots;
    this.#highest = slots.map(() => 0);
  }

  async write(slot: number, fencingToken: number, value: string): Promise<WriteResult> {
    const { fence, value: valueKey } = this.#slots[slot] as SlotKeys;
    const [accepted, highest] = await this.#redis.eval<string[], [number, number]>(
      writeIfNotStale,
      [fence, valueKey],
      [String(fencingToken), value],
    );
    if (accepted === 1) this.accepted += 1;
    else this.refused += 1;
    this.#highest[slot] = Math.max(this.#highest[slot] ?? 0, highest);
    for (const listener of this.#onAccepted) listener();
    return { accepted: accepted === 1, highest };
  }

  /**
   * Resolves once the slot accepted a write with a token above `fencingToken`, or after `ms`, or
   * when `signal` aborts: the frozen worker sleeps until its successor has written, so that its
   * late write meets a newer one (a real stalled process would write whenever it woke up).
   */
  newerThan(slot: number, fencingToken: number, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#onAccepted.delete(check);
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const check = () => {
        if ((this.#highest[slot] ?? 0) > fencingToken) done();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
      this.#onAccepted.add(check);
      check();
    });
  }
}
