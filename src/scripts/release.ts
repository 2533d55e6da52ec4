import { defineScript } from "./script";

/**
 * Deletes the lock only while it holds this token; leaves a receipt of the call, so that a re-run
 * of the same call (a client retry after a lost reply) answers 1 again instead of 0; and announces
 * the release on the lock's event channel, so waiters retry at once rather than at their next poll
 * (a PUBLISH nobody listens to costs next to nothing). The receipt lives 30 s, far longer than a
 * client keeps re-sending one request. Everything else is derived here rather than sent, to keep
 * each request small.
 *
 * KEYS[1]  lock key
 * KEYS[2]  receipt key of the lock (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  call id, unique per release() call
 * Returns  1 when this call deleted the lock, 0 when the key did not hold this token.
 */
export const deleteIfOwned = defineScript({
  name: "release",
  source: `if redis.call("GET", KEYS[2]) == ARGV[2] then
  return 1
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  redis.call("SET", KEYS[2], ARGV[2], "PX", 30000)
  redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "released")
  return 1
end
return 0
`,
  sha1: "a0dac96a7746cda3872a03e643c83b25b358eb00",
  keyLockedSha1: "443ea2887efc810088e2efee3c5ac1075cef9d29",
});
