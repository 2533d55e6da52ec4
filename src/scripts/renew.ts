import type { LuaScript } from "./lua-script";

/**
 * Restarts the lease from now while the lock holds this token: the renewal that auto-extend
 * sends. Running it twice has the same effect as once, so client retries are harmless.
 *
 * KEYS[1]  lock key
 * ARGV[1]  token
 * ARGV[2]  lease, in milliseconds
 * Returns  1 when the lease was restarted, 0 when the key does not hold this token.
 */
export const renewIfOwned: LuaScript = {
  name: "renew",
  source: `if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return 0
`,
  sha1: "60afbfee3a2c15b3892c568bb1ca251c76a1cf0d",
};
