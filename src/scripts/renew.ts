import { defineScript } from "./script";

/**
 * The renewal that auto-extend sends: while the lock holds this token, makes at least a lease
 * remain, never less than what is left (a longer `extend()` is not undone). Running it twice has
 * the same effect as once, so client retries are harmless.
 *
 * KEYS[1]  lock key
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * Returns  {1, pttl} when the key holds this token (pttl: remaining lease in milliseconds after the
 *          call, -1 if the key has no expiry); {0, -2} when it does not.
 */
export const renewIfOwned = defineScript({
  name: "renew",
  source: `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[1])
local lease = tonumber(ARGV[2])
if remaining >= 0 and remaining < lease then
  redis.call("PEXPIRE", KEYS[1], lease)
  remaining = lease
end
return {1, remaining}
`,
  sha1: "c010a120228f9072317a1fc3b616b766f422028b",
  keyLockedSha1: "d3bb847eb4b92bb6d4dea771e4f9d03fc9eefd0e",
});
