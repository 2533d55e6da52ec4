import { defineScript } from "./script";
import { RECENT, TRIES } from "./tries";

// A plain lock's scripts: its key holds the token (as in 0.2), its grant key the tries that took or confirmed
// it (`tries.ts`), its receipt key the recent release and extend calls, so a re-sent one answers as its
// first run did. All keys share a hash slot; Lua stays comment-free (it ships in bundles).
// KEYS[1] lock key; ARGV[1] token (in every script)

// The receipt lists the last 32 release and extend call ids that took effect, and apart from them the last
// 32 that found the token not holding (newest first), as a permit's releases are kept, for 30 s or the
// lease (ARGV[4]) if longer, as a request may take a lease to land (`landed()`): a re-sent call finds
// its own first run among later ones (one other release and the token taken again elsewhere in between made
// a re-sent release delete that newer hold), and answers as it did.
const RECEIPT = `local function receipted(id)
  return answered(redis.call("GET", KEYS[2]), id)
end
local function receipt(id)
  redis.call("SET", KEYS[2], recent(redis.call("GET", KEYS[2]), 32, id), "PX", math.max(30000, tonumber(ARGV[4]) or 0))
end
`;
// A held lease only grows: a late shorter try never shortens a newer hold, and the grant lives as long as the
// key (a late copy of a try restarts both: a grant gone while the key holds names no hold). The grant lists tries in any order
// they reached Redis; an undo frees the lock once all were abandoned. A try while the token holds without a
// grant (it expired; the lock renewed past it: its holder lives) lists nothing; undone, it frees nothing.
// A try of the token sent no later than the hold's taker (the grant's first entry; ids open with their
// sender's µs clock; 0.4's decimal ids are not compared), and not on the list live, confirms nothing: it is
// named abandoned (`<id>!`) and told the taker's order. It is a late copy of a try refused before (confirming,
// it kept the hold for nobody once the taker's try was undone), or a live try crossing a later one of its
// token, sent again with a later id (one request more). Named, a copy of it landing once the hold is released
// takes nothing. Orders compare as numbers: Lua compares strings by Redis's locale (LC_COLLATE).
// While the lock is free the grant names the tries that must take nothing: a released hold's, and undone ones
// that had not arrived (a copy its client gave up on may still come), for 30 s.
const TAKE = `local holder, grant = redis.call("GET", KEYS[1]), redis.call("GET", KEYS[2])
if holder and holder ~= ARGV[1] then
  return {0, redis.call("PTTL", KEYS[1])}
end
if holder then
  local mine, taker = string.match(ARGV[2], "^(%w+)%-"), string.match(grant or "", "^(%w+)%-")
  local live = taker and string.find(" " .. grant .. " ", " " .. ARGV[2] .. " ", 1, true)
  if taker and #taker == #(mine or "") and tonumber(mine, 36) <= tonumber(taker, 36) and not live then
    local life = math.max(30000, redis.call("PTTL", KEYS[1]), redis.call("PTTL", KEYS[2]))
    redis.call("SET", KEYS[2], confirmed(grant, ARGV[2] .. "!"), "PX", life)
    return {0, -3, tonumber(taker, 36)}
  end
  if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[3]) then
    redis.call("PEXPIRE", KEYS[1], ARGV[3])
  end
  if grant then
    redis.call("SET", KEYS[2], confirmed(grant, ARGV[2]), "PX", math.max(redis.call("PTTL", KEYS[2]), tonumber(ARGV[3])))
  end
elseif grant and tried(grant, ARGV[2]) then
  return {0, 0}
else
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[3])
  redis.call("SET", KEYS[2], buried(grant, 32, ARGV[2]), "PX", ARGV[3])
  redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "acquired")
end
`;

/**
 * Takes the lock when free, or confirms it when it holds this token already (a re-run whose reply was lost,
 * or a token chosen again): the lease restarts from now (never shortened), and the grant lists this try. A
 * new hold is announced, so waiters woken by a release stand down; a confirmed one is not (no permit was
 * taken: a waiter that heard a release must still try).
 * KEYS[2]  grant key; KEYS[3] fencing counter key (with fencing)
 * ARGV[2]  request id, unique per try; ARGV[3] lease, ms
 * Returns  {1, 0, kept} when this token holds the lock after the call (kept: 1 when it held before it, the
 *          hold confirmed, 0 when the call made a new one); {0, pttl} when another token holds it (pttl: its
 *          remaining lease in ms, -1 when that key has no expiry); {0, -3, order} when this token holds it
 *          by a try whose id's order (µs) is `order`, at or after this one's: this try named abandoned.
 */
export const takeLock = /* @__PURE__ */ defineScript(
  "acquire",
  TRIES,
  TAKE,
  `return {1, 0, holder and 1 or 0}\n`,
);

/**
 * {@link takeLock}, issuing a fencing token from a counter that never expires (Upstash persists it), so the
 * script reads no clock, as Upstash asks. Returns {1, fencing token, kept} on success.
 */
export const takeLockCountedFence = /* @__PURE__ */ defineScript(
  "acquire",
  TRIES,
  TAKE,
  `local fence = redis.call("INCR", KEYS[3])
redis.call("PERSIST", KEYS[3])
return {1, fence, holder and 1 or 0}
`,
);

/**
 * {@link takeLock}, with a fencing token never below Redis's clock in µs, max(previous + 1, server time), so
 * tokens keep increasing if the counter was lost (a restart without persistence). Returns {1, fencing token,
 * kept}.
 * A counter that never expires (counted fencing made it so) is left so: expired, a counted acquisition
 * would start again from 1.
 * ARGV[4]  fencing counter lifetime, ms
 */
export const takeLockClockFence = /* @__PURE__ */ defineScript(
  "acquire",
  TRIES,
  TAKE,
  `local clock = redis.call("TIME")
local fence = math.max(tonumber(redis.call("GET", KEYS[3]) or "0") + 1, tonumber(clock[1]) * 1000000 + tonumber(clock[2]))
if redis.call("PTTL", KEYS[3]) == -1 then
  redis.call("SET", KEYS[3], string.format("%.0f", fence))
else
  redis.call("SET", KEYS[3], string.format("%.0f", fence), "PX", ARGV[4])
end
return {1, fence, holder and 1 or 0}
`,
);

/**
 * Deletes the lock if it holds this token, announcing it; the receipt lists its call id (see RECEIPT), so a re-run
 * answers as the first run did (while fewer than 32 releases and extends came between): one that found the
 * lock gone deletes nothing, though its token may hold it again by then. An undo (ARGV[3] "1") marks try ARGV[2]
 * in the grant, deleting the lock once all were abandoned; a try that had not arrived it names as abandoned,
 * while the lock is free or held by the same token (its hold, which that try would confirm, may be released
 * before the try's late copy comes: that copy must not take the lock again; no grant becomes `*`, which no
 * undo frees). The grant stays 30 s, naming tries to refuse. (While another token holds, an undone try that
 * had not arrived is named nowhere: that hold's list is its own, and a 0.2 holder has none; docs/keys.md.)
 * KEYS[2]  receipt key; KEYS[3] grant key
 * A release deletes only the hold it names (ARGV[5], `owns`): its first copy, landing after its receipt
 * was pushed out by 32 others and after its token took the lock again, ends nothing.
 * ARGV[2]  call id of this release, or the request id of the try to undo; ARGV[3] "1" for an undo;
 *          ARGV[4] the lease, ms (how long the receipt lives, 30 s at least); ARGV[5] the id naming the hold
 * Returns  1 when this call (or an earlier run of it) deleted the lock, 0 otherwise.
 */
export const releaseLock = /* @__PURE__ */ defineScript(
  "release",
  TRIES,
  RECENT,
  RECEIPT,
  `local undo, grant = ARGV[3] == "1", redis.call("GET", KEYS[3])
if undo then
  if not grant or not tried(grant, ARGV[2]) then
    local holder = redis.call("GET", KEYS[1])
    if not holder then
      redis.call("SET", KEYS[3], buried(grant, 31, ARGV[2] .. "!"), "PX", 30000)
    elseif holder == ARGV[1] then
      redis.call("SET", KEYS[3], inserted(grant or "*", ARGV[2] .. "!"), "PX", math.max(30000, redis.call("PTTL", KEYS[1])))
    end
    return 0
  end
  local marked, left = abandon(grant, ARGV[2])
  if left then
    redis.call("SET", KEYS[3], marked, "PX", math.max(1, redis.call("PTTL", KEYS[3])))
    return 0
  end
else
  local ran = receipted(ARGV[2])
  if ran then
    return ran
  end
end
if redis.call("GET", KEYS[1]) ~= ARGV[1] or not (undo or owns(grant, ARGV[5])) then
  if not undo then
    receipt(ARGV[2] .. "!")
  end
  return 0
end
redis.call("DEL", KEYS[1])
if grant then
  redis.call("SET", KEYS[3], grant, "PX", 30000)
end
if not undo then
  receipt(ARGV[2])
end
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(KEYS[1]), "released")
return 1
`,
);

/**
 * Adds ms to the lease while this token holds the hold its lease names (ARGV[5], as in releaseLock); its call
 * id heads the receipt, so a re-run adds nothing (and one of a call that found the token not holding extends
 * nothing, though it may hold again by then). The grant gains `*`: whoever extends holds now, an earlier
 * try's undo must not free it, and the tries' late copies must still take nothing once the lock is free.
 * KEYS[2]  receipt key; KEYS[3] grant key
 * ARGV[2]  call id; ARGV[3] milliseconds to add (0 adds nothing); ARGV[4] the lease, ms (as in releaseLock);
 *          ARGV[5] the id naming the hold (`owns`)
 * Returns  {1, pttl} when the key holds this token after the call (-1: no expiry, left alone), else {0, -2}.
 */
export const extendLock = /* @__PURE__ */ defineScript(
  "extend",
  TRIES,
  RECENT,
  RECEIPT,
  `local ran, grant = receipted(ARGV[2]), redis.call("GET", KEYS[3])
if redis.call("GET", KEYS[1]) ~= ARGV[1] or ran == 0 or not (ran or owns(grant, ARGV[5])) then
  if not ran then
    receipt(ARGV[2] .. "!")
  end
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[1])
if remaining == -1 or ran then
  return {1, remaining}
end
local target = remaining + tonumber(ARGV[3])
redis.call("PEXPIRE", KEYS[1], target)
receipt(ARGV[2])
if grant then
  redis.call("SET", KEYS[3], tried(grant, "*") and grant or grant .. " *", "PX", target)
end
return {1, target}
`,
);

/**
 * Auto-extend's renewal and status check: while this token holds, at least ARGV[2] ms remain, never less than
 * left. Compared in Lua: the HTTP client JSON-parses replies ("123" becomes a number). Safe to run twice.
 * Whoever asks holds from now on (a uuid seeded elsewhere starts a lease here): the grant gains `*`, which no
 * undo frees, so no undo of a try abandoned earlier frees the hold, as after an extend; unless ARGV[2] is -1,
 * which only looks, or ARGV[3] is "0": the renewal of a hold a try of this process took, whose id stays on
 * the list (a late copy of it, landing on a newer hold of the token, must leave that hold's tries to undo).
 * The grant lives as long as the key, to name the hold's tries once it is released.
 * A renewal names its lease's hold (ARGV[4], `owns`): a late copy of it (its client re-sent it), landing on a
 * newer hold of the token (a uuid acquired again), neither renews that hold nor reads it as its own.
 * KEYS[2]  grant key
 * ARGV[2]  lease, ms (0: status; -1: status that confirms nothing); ARGV[3] "0": a renewal that adds no `*`
 * ARGV[4]  the id naming the hold, or "" (a seeded token's lease): any hold of the token
 * Returns  {1, pttl} when the key holds this token after the call; {0, -2} when it does not.
 */
export const renewLock = /* @__PURE__ */ defineScript(
  "renew",
  TRIES,
  `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return {0, -2}
end
local grant = redis.call("GET", KEYS[2])
if not owns(grant, ARGV[4]) then
  return {0, -2}
end
local remaining, lease = redis.call("PTTL", KEYS[1]), tonumber(ARGV[2])
if remaining >= 0 and remaining < lease then
  redis.call("PEXPIRE", KEYS[1], lease)
  remaining = lease
end
if grant and lease >= 0 then
  local marked = (ARGV[3] == "0" or tried(grant, "*")) and grant or grant .. " *"
  redis.call("SET", KEYS[2], marked, "PX", math.max(1, remaining, redis.call("PTTL", KEYS[2])))
end
return {1, remaining}
`,
);
