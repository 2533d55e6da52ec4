import { defineScript } from "./script";

// Three forms of the acquire script, one per kind of fencing, so that the one Upstash runs by
// default reads no clock (Upstash asks for deterministic scripts). Each takes the lock when the key
// is free, or confirms it when the key already holds this token: a request that ran but whose
// reply was lost, then re-sent by the client, must still count as acquired. The lease restarts
// from now in both cases. A success is announced on the lock's event channel, so that waiters
// woken by a release who have not retried yet stand down.

/**
 * Acquire without fencing.
 *
 * KEYS[1]  lock key
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * Returns  {1} when this token holds the lock after the call; {0, pttl, holder} when another token
 *          holds it, pttl being its remaining lease in milliseconds (-1 when that key has no expiry)
 *          and holder the first 32 bits of the SHA-1 of its token: a fingerprint that tells a waiter
 *          whether the same holder kept the lock between two of its tries, and reveals nothing else.
 */
export const takeIfFreeOrOwned = defineScript({
  name: "acquire",
  source: `local holder = redis.call("GET", KEYS[1])
if holder ~= false and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1]), tonumber(string.sub(redis.sha1hex(holder), 1, 8), 16)}
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "acquired")
return {1}
`,
  sha1: "73b977467510381aca0b4a2b35c72d4a00bf1731",
  keyLockedSha1: "127c27a1583fba4fa0e23f1dcbd25f3abbbf8817",
});

/**
 * Acquire with a fencing token from a counter that never expires: the counter alone keeps tokens
 * increasing, for as long as the server keeps its data (Upstash persists it). Reads no clock.
 *
 * KEYS[1]  lock key
 * KEYS[2]  fencing counter key (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * Returns  {1, fencing token} when this token holds the lock after the call; {0, pttl, holder} as above.
 */
export const takeWithCountedFence = defineScript({
  name: "acquire",
  source: `local holder = redis.call("GET", KEYS[1])
if holder ~= false and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1]), tonumber(string.sub(redis.sha1hex(holder), 1, 8), 16)}
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "acquired")
local fence = redis.call("INCR", KEYS[2])
redis.call("PERSIST", KEYS[2])
return {1, fence}
`,
  sha1: "e4c03d0e52f2020a4117fbb035b52ccdb9bc6356",
  keyLockedSha1: "0c8f91250fd2258e54baf0d288816d9ccb0ca263",
});

/**
 * Acquire with a fencing token that never falls below Redis's clock: the larger of the previous
 * token plus one and the server time in microseconds. The clock keeps tokens increasing when the
 * counter key has expired or was lost in a restart without persistence; the counter keeps them
 * increasing when the clock stands still or steps back by less than the counter's lifetime.
 *
 * KEYS[1]  lock key
 * KEYS[2]  fencing counter key (same slot as KEYS[1])
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * ARGV[3]  fencing counter lifetime, in milliseconds
 * Returns  {1, fencing token} when this token holds the lock after the call; {0, pttl, holder} as above.
 */
export const takeWithClockFence = defineScript({
  name: "acquire",
  source: `local holder = redis.call("GET", KEYS[1])
if holder ~= false and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1]), tonumber(string.sub(redis.sha1hex(holder), 1, 8), 16)}
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "acquired")
local clock = redis.call("TIME")
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local fence = math.max(tonumber(redis.call("GET", KEYS[2]) or "0") + 1, now)
redis.call("SET", KEYS[2], string.format("%.0f", fence), "PX", ARGV[3])
return {1, fence}
`,
  sha1: "e56c2bf20516a39de9a963e4e5ef6561b6dce1d1",
  keyLockedSha1: "8132fee19f3d04422c87c59cd5b7dc5f8ef1860a",
});
