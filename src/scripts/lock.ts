import { ORDER } from "./order";
import { defineScript } from "./script";

// A plain lock's scripts. Its key holds the token (as in 0.2), its grant key the try that took it, its
// receipt key the last release or extend call (as in 0.3): a re-sent release or extend answers as its first
// run did, and an abandoned try can be undone without undoing anything later. All keys share one hash slot.
// KEYS[1] lock key; ARGV[1] token (in every script)

const CHANNEL = `"lock-events:" .. redis.sha1hex(KEYS[1])`;
// A held lease only grows: a late shorter try never cuts a newer hold short. A try reaching Redis after a
// newer request of its token, or while it holds with no grant (expired; which is newer is unknown), leaves
// the grant alone, so its undo cannot free the lock. A try that finds its token holding names itself with a
// "+": it took nothing, so its undo frees the lock only when the caller drew the token itself (no one else
// can hold it); a token passed in may be another lease's, here or in another process, which must keep it.
// Lua stays comment-free: it ships in bundles.
const TAKE = `${ORDER}local holder = redis.call("GET", KEYS[1])
if holder and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1])}
end
if not holder then
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[3])
elseif redis.call("PTTL", KEYS[1]) < tonumber(ARGV[3]) then
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
local grant = redis.call("GET", KEYS[2])
if not holder then
  redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
elseif grant and order(ARGV[2]) > order(grant) then
  redis.call("SET", KEYS[2], ARGV[2] .. "+", "PX", ARGV[3])
end
redis.call("PUBLISH", ${CHANNEL}, "acquired")
`;

/**
 * Takes the lock when free, or confirms it when it holds this token already (a re-run whose reply was lost,
 * or a token chosen again): the lease restarts from now (never shortened) and the grant names this try (as
 * `<id>+` when it only confirmed) unless it names a newer request. A success is announced, so waiters woken
 * by a release stand down.
 * KEYS[2]  grant key; KEYS[3] fencing counter key (with fencing)
 * ARGV[2]  request id, unique per try; ARGV[3] lease, ms
 * Returns  {1} when this token holds the lock after the call; {0, pttl} when another token holds it (pttl:
 *          its remaining lease in ms, -1 when that key has no expiry).
 */
export const takeLock = defineScript("acquire", TAKE, `return {1}\n`);

/**
 * {@link takeLock}, issuing a fencing token from a counter that never expires (Upstash persists it), so the
 * script reads no clock, as Upstash asks. Returns {1, fencing token} on success.
 */
export const takeLockCountedFence = defineScript(
  "acquire",
  TAKE,
  `local fence = redis.call("INCR", KEYS[3])
redis.call("PERSIST", KEYS[3])
return {1, fence}
`,
);

/**
 * {@link takeLock}, with a fencing token never below Redis's clock in µs, max(previous + 1, server time), so
 * tokens keep increasing if the counter was lost (a restart without persistence). Returns {1, fencing token}.
 * ARGV[4]  fencing counter lifetime, ms
 */
export const takeLockClockFence = defineScript(
  "acquire",
  TAKE,
  `local clock = redis.call("TIME")
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local fence = math.max(tonumber(redis.call("GET", KEYS[3]) or "0") + 1, now)
redis.call("SET", KEYS[3], string.format("%.0f", fence), "PX", ARGV[4])
return {1, fence}
`,
);

/**
 * Deletes the lock while it holds this token and announces it; its call id stays as the receipt (30 s) so a
 * re-run answers 1. An undo (ARGV[3] "1") deletes only while the grant names the abandoned try ARGV[2] as
 * the one that took the lock, or (ARGV[4] "1": the caller drew the token) as one that confirmed it.
 * KEYS[2]  receipt key; KEYS[3] grant key
 * ARGV[2]  call id of this release, or the request id of the try to undo; ARGV[3] "1" for an undo;
 *          ARGV[4] "1" when the token is the undoing acquisition's own
 * Returns  1 when this call (or an earlier run of it) deleted the lock, 0 otherwise.
 */
export const releaseLock = defineScript(
  "release",
  `local undo = ARGV[3] == "1"
if undo then
  local grant = redis.call("GET", KEYS[3])
  if grant ~= ARGV[2] and (ARGV[4] ~= "1" or grant ~= ARGV[2] .. "+") then
    return 0
  end
elseif redis.call("GET", KEYS[2]) == ARGV[2] then
  return 1
end
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call("DEL", KEYS[1], KEYS[3])
if not undo then
  redis.call("SET", KEYS[2], ARGV[2], "PX", 30000)
end
redis.call("PUBLISH", ${CHANNEL}, "released")
return 1
`,
);

/**
 * Adds ms to the lease while this token holds; its call id becomes the receipt, so a re-run adds nothing. It
 * names itself in the grant: whoever extends holds now, and an earlier try's undo must not free it.
 * KEYS[2]  receipt key; KEYS[3] grant key
 * ARGV[2]  call id; ARGV[3] milliseconds to add (0 adds nothing)
 * Returns  {1, pttl} when the key holds this token after the call (-1: no expiry, left alone), else {0, -2}.
 */
export const extendLock = defineScript(
  "extend",
  `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[1])
if remaining == -1 or redis.call("GET", KEYS[2]) == ARGV[2] then
  return {1, remaining}
end
local target = remaining + tonumber(ARGV[3])
redis.call("PEXPIRE", KEYS[1], target)
redis.call("SET", KEYS[2], ARGV[2], "PX", 30000)
redis.call("SET", KEYS[3], ARGV[2], "PX", target)
return {1, target}
`,
);

/**
 * Auto-extend's renewal and status check: while this token holds, at least ARGV[2] ms remain, never less than
 * left. Compared in Lua: the HTTP client JSON-parses replies ("123" becomes a number). Safe to run twice.
 * ARGV[2]  lease, ms (0: status)
 * Returns  {1, pttl} when the key holds this token after the call; {0, -2} when it does not.
 */
export const renewLock = defineScript(
  "renew",
  `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
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
);
