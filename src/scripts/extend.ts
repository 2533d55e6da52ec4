import type { LuaScript } from "./lua-script";

/**
 * Adds milliseconds to the remaining lease while the lock holds this token. A receipt of the call
 * (30 s, shared with release) makes a re-run of the same call (a client retry after a lost reply)
 * a no-op that answers the same.
 *
 * KEYS[1]  lock key
 * KEYS[2]  receipt key of the lock (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  call id, unique per extend() call
 * ARGV[3]  milliseconds to add
 * Returns  {1, pttl} when the lease was extended (pttl: remaining lease in milliseconds after
 *          the call, -1 if the key has no expiry, which is then left alone);
 *          {0, -2} when the key does not hold this token.
 */
export const addLeaseIfOwned: LuaScript = {
  name: "extend",
  source: `if redis.call("GET", KEYS[2]) == ARGV[2] then
  return {1, redis.call("PTTL", KEYS[1])}
end
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[1])
if remaining == -1 then
  return {1, -1}
end
local target = remaining + tonumber(ARGV[3])
redis.call("PEXPIRE", KEYS[1], target)
redis.call("SET", KEYS[2], ARGV[2], "PX", 30000)
return {1, target}
`,
  sha1: "87e5f521168ef5d017ad5a7236ac92b84be3bb5b",
};
