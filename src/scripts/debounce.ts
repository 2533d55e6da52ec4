import { defineScript } from "./script";

/**
 * Counts a debounced call and gives the counter a lifetime, so an idle debouncer leaves no key
 * behind (0.2 never expired it). INCR keeps the value format of 0.2, so both can share an id.
 * KEYS[1]  counter key
 * ARGV[1]  counter lifetime, ms
 * Returns  the counter after this call.
 */
export const countCall = defineScript(
  "debounce",
  `local count = redis.call("INCR", KEYS[1])
redis.call("PEXPIRE", KEYS[1], ARGV[1])
return count
`,
);

/**
 * Tells whether no call was counted after ours (compared in Lua, see `renewLock`).
 * KEYS[1]  counter key
 * ARGV[1]  the counter value our call got
 * Returns  1 when the counter still has that value, else 0.
 */
export const isLatestCall = defineScript(
  "debounce",
  `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return 1
end
return 0
`,
);
