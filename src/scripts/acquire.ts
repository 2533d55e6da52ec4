import type { LuaScript } from "./lua-script";

/**
 * Takes the lock when the key is free, or confirms it when the key already holds this token:
 * a request that ran but whose reply was lost, then re-sent by the client, must still count
 * as acquired. The lease restarts from now in both cases. A success is announced on the lock's
 * event channel, so that waiters woken by a release who have not retried yet stand down.
 *
 * With a second key, also issues a fencing token: the larger of the previous token plus one and
 * Redis's clock in microseconds. The clock keeps tokens increasing when the counter key has
 * expired or was lost in a restart without persistence; the counter keeps them increasing when
 * the clock stands still or steps back by less than the counter's lifetime.
 *
 * KEYS[1]  lock key
 * KEYS[2]  fencing counter key (optional; same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * ARGV[3]  fencing counter lifetime, in milliseconds (with KEYS[2])
 * Returns  {1} or, with KEYS[2], {1, fencing token} when this token holds the lock after the call;
 *          {0, pttl} when another token holds it, pttl being its remaining lease in milliseconds
 *          (-1 when that key has no expiry).
 */
export const takeIfFreeOrOwned: LuaScript = {
  name: "acquire",
  source: `local holder = redis.call("GET", KEYS[1])
if holder ~= false and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1])}
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "acquired")
if KEYS[2] == nil then
  return {1}
end
local clock = redis.call("TIME")
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local fence = math.max(tonumber(redis.call("GET", KEYS[2]) or "0") + 1, now)
redis.call("SET", KEYS[2], string.format("%.0f", fence), "PX", ARGV[3])
return {1, fence}
`,
  sha1: "8e79f0138e100ee90769dcc9cd8a3c2bd062a120",
};
