import { defineScript } from "./script";

/**
 * Adds milliseconds to the remaining lease while the lock holds this token. A receipt of the call
 * (30 s, shared with release) makes a re-run of the same call (a client retry after a lost reply)
 * add nothing; the re-run still checks the owner, so it never reports this token as holding a key
 * that another owner took after the first run.
 *
 * KEYS[1]  lock key
 * KEYS[2]  receipt key of the lock (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  call id, unique per extend() call
 * ARGV[3]  milliseconds to add (0 adds nothing and only checks)
 * Returns  {1, pttl} when the key holds this token after the call (pttl: remaining lease in
 *          milliseconds, -1 if the key has no expiry, which is then left alone);
 *          {0, -2} when the key does not hold this token.
 */
export const addLeaseIfOwned = defineScript({
  name: "extend",
  source: `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[1])
if remaining == -1 or redis.call("GET", KEYS[2]) == ARGV[2] then
  return {1, remaining}
end
local target = remaining + tonumber(ARGV[3])
redis.call("PEXPIRE", KEYS[1], target)
redis.call("SET", KEYS[2], ARGV[2], "PX", 30000)
return {1, target}
`,
  sha1: "66ad59f70905014529128f18d08b72fd112a3f10",
  keyLockedSha1: "bdc0ba29e6e749d50fbadecf1c14d87d2478f73b",
});
