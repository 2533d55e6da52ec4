import { sha1Hex } from "./digest";
import { hashSlot, hashTag, tagForSlot } from "./hash-slot";

/**
 * The name of a key that belongs with the lock key `key` (its receipt, fencing counter, permits,
 * queue), in the same Redis Cluster hash slot, so one script may touch them all. Distinct keys give
 * distinct names, and no name repeats a lock key's: an id without a hash tag is wrapped in braces
 * (`{jobs}:fence`, as 0.3 named it); an id with a tag keeps it and is written out in full after it
 * (`{jobs}{jobs}:fence`), so that `"jobs"` and `"{jobs}"` never share; an id that cannot be a tag
 * (empty, or with a `}` outside one) gets a computed tag of its own slot, then `#` and the id with
 * `%`, `{` and `}` percent-encoded, which has no braces, so no tagged key can spell it.
 *
 * @param suffix one of the library's suffixes, none of which ends another (":fence", ":permit:1").
 */
export function companionKey(key: string, suffix: string): string {
  const tag = hashTag(key);
  if (tag !== undefined) return `{${tag}}${key}${suffix}`;
  if (key !== "" && !key.includes("}")) return `{${key}}${suffix}`;
  const escaped = key.replace(/[%{}]/g, (char) => `%${char.charCodeAt(0).toString(16)}`);
  return `{${tagForSlot(hashSlot(key))}}#${escaped}${suffix}`;
}

/**
 * The pub/sub channel a lock's acquisitions and releases are announced on:
 * `lock-events:<SHA-1 of the key, hex>`, which the scripts compute with `redis.sha1hex`. Hashing
 * keeps the name short and safe in a URL path (Upstash's subscribe endpoint puts it there).
 * Undefined where Web Crypto is missing (see `digest.ts`).
 */
export async function eventChannel(key: string): Promise<string | undefined> {
  const sha1 = await sha1Hex(key);
  return sha1 && `lock-events:${sha1}`;
}

/**
 * How long a receipt of a release or extend call lives, in milliseconds: far longer than a client
 * keeps re-sending one request (about 4.3 s with @upstash/redis defaults). Set in the scripts.
 */
export const RECEIPT_MS = 30_000;

/**
 * With the clock floor only: how long the fencing counter outlives the lease of the last
 * acquisition that used it, in milliseconds. Tokens stay increasing after it expires because they
 * never fall below Redis's clock in microseconds; the counter only guards against that clock
 * stepping back, by less than this much. Without the clock floor the counter never expires.
 */
export const FENCE_COUNTER_LIFETIME_MS = 60 * 60 * 1000;
