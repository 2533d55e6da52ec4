import type { LuaScript } from "./lua-script";

/**
 * Deletes the lock only while it holds this token, leaves a short-lived receipt so that a re-run
 * of the same call (a client retry after a lost reply) answers 1 again instead of 0, and
 * announces the release so that waiters retry at once instead of at their next poll (a PUBLISH
 * nobody listens to costs next to nothing).
 *
 * KEYS[1]  lock key
 * KEYS[2]  receipt key of this token (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  call id, unique per release() call
 * ARGV[3]  receipt lifetime, in milliseconds
 * ARGV[4]  channel to announce the release on
 * Returns  1 when this call deleted the lock, 0 when the key did not hold this token.
 */
export const deleteIfOwned: LuaScript = {
  name: "release",
  source: `if redis.call("GET", KEYS[2]) == ARGV[2] then
  return 1
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
  redis.call("PUBLISH", ARGV[4], "released")
  return 1
end
return 0
`,
  sha1: "1adefc8f6a74adfdf16e0052098ccc47c121bbb6",
};
