import { sameSlotKey } from "./hash-slot";

/**
 * How long a release or extend receipt lives, in milliseconds. It must outlast the client's own
 * retries of one request (about 4.3 s with @upstash/redis defaults) with room to spare.
 */
export const RECEIPT_LIFETIME_MS = 30_000;

/** Where release and extend leave the receipt of their last call for `token`. */
export function receiptKey(lockKey: string, token: string): string {
  return sameSlotKey(lockKey, `:receipt:${token}`);
}

/**
 * How long a debounce counter outlives the wait, in milliseconds: the last caller reads it back
 * after `wait`, so it must survive a slow request or a paused process.
 */
export const DEBOUNCE_COUNTER_GRACE_MS = 60_000;
