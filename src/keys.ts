import { sha1Hex } from "./digest";
import { hashSlot, hashTag, tagForSlot } from "./hash-slot";

/**
 * The name of a key belonging with lock key `key` (receipt, fencing counter, permits, queue), in its Redis
 * Cluster hash slot so one script may touch them all. Distinct keys give distinct names, none a lock key's:
 * an id without a hash tag is wrapped in braces (`{jobs}:fence`, as 0.3 named it); one with a tag keeps it
 * and follows it in full (`{jobs}{jobs}:fence`), so `"jobs"` and `"{jobs}"` never share; one that cannot be
 * a tag (empty, or with a `}` outside one) gets a computed tag of its slot, `#`, and the id with `%{}`
 * percent-encoded, which no tagged key spells.
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
 * The pub/sub channel of a lock's acquisitions and releases: `lock-events:<hex SHA-1 of the key>`, as
 * `redis.sha1hex` computes it; short, URL-safe for Upstash's subscribe. Undefined without Web Crypto.
 */
export async function eventChannel(key: string): Promise<string | undefined> {
  const sha1 = await sha1Hex(key);
  return sha1 && `lock-events:${sha1}`;
}

/**
 * How long a release or extend call's receipt lives, in ms (set in the scripts): far longer than a
 * client keeps re-sending one request (about 4.3 s with `@upstash/redis` defaults).
 */
export const RECEIPT_MS = 30_000;

/**
 * Clock floor only (else it never expires): how long (ms) the fencing counter outlives the last lease. Then
 * tokens still rise, never below Redis's µs clock; it guards only against that clock stepping back less.
 */
export const FENCE_COUNTER_LIFETIME_MS = 60 * 60 * 1000;
