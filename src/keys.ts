import { sameSlotKey } from "./hash-slot";

/**
 * Where release and extend leave the receipt of their last call on a lock, for 30 s (set in the
 * scripts): far longer than a client keeps re-sending one request (about 4.3 s with
 * @upstash/redis defaults). One key per lock, not per token, keeps requests small; the price is
 * that a re-sent call answers differently if another owner released or extended meanwhile.
 */
export function receiptKey(lockKey: string): string {
  return sameSlotKey(lockKey, ":receipt");
}

/**
 * How long a debounce counter outlives the wait, in milliseconds: the last caller reads it back
 * after `wait`, so it must survive a slow request or a paused process.
 */
export const DEBOUNCE_COUNTER_GRACE_MS = 60_000;

/** Where fencing tokens are counted for a lock key; same slot, so one script touches both. */
export function fenceKey(lockKey: string): string {
  return sameSlotKey(lockKey, ":fence");
}

/**
 * With the clock floor only: how long the fencing counter outlives the lease of the last
 * acquisition that used it, in milliseconds. Tokens stay increasing after it expires because they
 * never fall below Redis's clock in microseconds; the counter only guards against that clock
 * stepping back, by less than this much. Without the clock floor the counter never expires.
 */
export const FENCE_COUNTER_LIFETIME_MS = 60 * 60 * 1000;
