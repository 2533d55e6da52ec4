import { defineScript } from "./script";

// A debouncer's scripts. KEYS[1] the call counter (an integer, as in 0.2, so both can share an id); KEYS[2]
// its calls key, in the same slot: the recent calls, newest first, each `<call id>=<count it got>`. A call
// is known by its id: a copy of its request arriving twice (a client's re-send, one its client gave up on)
// counts once, and the last call is the newest on the list, not whoever last saw a count (counts repeat once
// the counter is lost, as in a restart without persistence). Lifetimes only grow (debouncers with different
// waits share an id).

/**
 * Counts a debounced call once, however often its request arrives, and gives both keys a lifetime, so an
 * idle debouncer leaves nothing behind (0.2's counter lived forever). The list keeps the calls of the last
 * 30 s (far longer than a client re-sends one request), by the µs time each id starts with, on its caller's
 * clock, and the 16 newest whatever their clocks say (a caller's clock far ahead must not drop them all); at
 * most 512 (a busier debouncer's oldest late copies may count again). It kept 16: a copy arriving after 16
 * other calls counted again and, the newest on the list, left no caller to run the callback. A call over
 * 60 s older than the newest counted one (its request long on its way, its caller perhaps told it failed:
 * a caller waits `wait` + 60 s) counts nothing: counted, it would be the newest, and a newer caller whose
 * check came after it would find itself superseded. Callers' clocks must agree within those 60 s.
 * ARGV[1]  lifetime, ms; ARGV[2] the call's id
 * Returns  the count this call got; 0 for a call too old to count.
 */
export const countCall = /* @__PURE__ */ defineScript(
  "debounce",
  `local calls, lifetime = redis.call("GET", KEYS[2]) or "", tonumber(ARGV[1])
local at = string.find(" " .. calls, " " .. ARGV[2] .. "=", 1, true)
if at then
  return tonumber(string.match(calls, "^%d+", at + #ARGV[2] + 1))
end
local mine = tonumber(string.match(ARGV[2], "^%d+")) or 0
if (tonumber(string.match(calls, "^%d+")) or 0) > mine + 60000000 then
  return 0
end
local count = redis.call("INCR", KEYS[1])
if redis.call("PTTL", KEYS[1]) < lifetime then
  redis.call("PEXPIRE", KEYS[1], lifetime)
end
local recent, since = {ARGV[2] .. "=" .. count}, mine - 30000000
for each in string.gmatch(calls, "%S+") do
  if #recent == 512 then break end
  if #recent < 16 or (tonumber(string.match(each, "^%d+")) or 0) >= since then
    recent[#recent + 1] = each
  end
end
redis.call("SET", KEYS[2], table.concat(recent, " "), "PX", math.max(lifetime, redis.call("PTTL", KEYS[2])))
return count
`,
);

/**
 * Tells whether no call was counted after ours: the counter still has our count (a 0.2 caller's INCR changes
 * it) and ours is the newest call on the list. Compared in Lua, see `renewLock`.
 * ARGV[1]  the count our call got; ARGV[2] its id
 * Returns  1 when ours is the last call, else 0.
 */
export const isLatestCall = /* @__PURE__ */ defineScript(
  "debounce",
  `if redis.call("GET", KEYS[1]) == ARGV[1] and string.sub(redis.call("GET", KEYS[2]) or "", 1, #ARGV[2] + 1) == ARGV[2] .. "=" then
  return 1
end
return 0
`,
);
