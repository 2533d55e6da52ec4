import type { LuaScript } from "./lua-script";

/**
 * Takes the lock when the key is free, or confirms it when the key already holds this token:
 * a request that ran but whose reply was lost, then re-sent by the client, must still count
 * as acquired. The lease restarts from now in both cases.
 *
 * KEYS[1]  lock key
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * Returns  {1} when this token holds the lock after the call;
 *          {0, pttl} when another token holds it, pttl being its remaining lease in milliseconds
 *          (-1 when that key has no expiry).
 */
export const takeIfFreeOrOwned: LuaScript = {
  name: "acquire",
  source: `local holder = redis.call("GET", KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  return {1}
end
return {0, redis.call("PTTL", KEYS[1])}
`,
  sha1: "9489ad61b582a35e3a924ba793f4989e991ef63b",
};
