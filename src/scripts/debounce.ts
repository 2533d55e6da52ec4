import { defineScript } from "./script";

/**
 * Counts a debounced call and gives the counter a lifetime, so an idle debouncer leaves no key
 * behind (0.2 never expired it). INCR keeps the value format of 0.2, so both versions can share an id.
 *
 * KEYS[1]  counter key
 * ARGV[1]  counter lifetime, in milliseconds
 * Returns  the counter after this call.
 */
export const countCall = defineScript({
  name: "debounce",
  source: `local count = redis.call("INCR", KEYS[1])
redis.call("PEXPIRE", KEYS[1], ARGV[1])
return count
`,
  sha1: "4c19274956f9d21f6e86d6e4a54013e2e57a991d",
  keyLockedSha1: "9d57fadf0471ebdaae94142b302f78f75dc5f3dc",
});

/**
 * Tells whether no call was counted after ours. Compared in Lua: see `checkOwner`.
 *
 * KEYS[1]  counter key
 * ARGV[1]  the counter value our call got
 * Returns  1 when the counter still has that value, else 0.
 */
export const isLatestCall = defineScript({
  name: "debounce check",
  source: `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return 1
end
return 0
`,
  sha1: "fed32af330e323b164efb1185f4ec25a7394132d",
  keyLockedSha1: "cb2738de9632d9b41af408236feddf93959215c9",
});
