import { defineScript } from "../scripts/script";
import { RECENT, TRIES } from "../scripts/tries";

// Scripts over permit keys (a semaphore's, one per permit; a fair lock's, its lock key), each holding its
// holder's token with a lease, expiring by Redis's clock. No script builds keys or reads a clock (but the
// clock floor's fencing token).
// Fair waiters queue in two sorted sets: `queue` by place in line (from a counter never repeating while the
// line lives), `deadlines` by deadline (ms on the waiters' clocks, from ARGV), renewed by each try; a gone
// waiter's entry is swept once past it; a late copy of an older try never moves it earlier (ZADD GT). k free
// permits go to the first k in line.
// The receipts hash says, per permit (field "1", "2", ...), who holds it: the tries that took or confirmed it
// (`tries.ts`), or the waiter a release handed it to (by its id); field "r" the recent releases' ids
// (newest first; as many as the permits, 32 to 256), so a re-run finds its own among others since, and
// field "e<n>" permit n's last 32 extends. An undo
// or leave frees a permit only once all on its list were abandoned.
// Field "x" names the tries that must take nothing (newest first, about 20): those on a permit's list when it
// was freed, and undone ones that took nothing (a copy its client gave up on may still arrive).
// A fair waiter that left the line (gave up, made its last try, took a permit, or a release handed it one)
// keeps a deadline until swept, moved to the leaving try's (or leave's) own: a try of a waiter with a
// deadline and no place, sent no later than that (a late copy its client re-sent; a waiter's clock only
// moves forward), neither queues nor takes, nor confirms a hold but its own. A later try goes on
// as any (a taking try's reply lost, its undo frees the permit and the waiter tries on; a grant ran out).
// The id of one a release handed a permit, buried with the permit's list when that is released, refuses
// its copies too, but a re-run of a take of its own.
// KEYS[1] queue, KEYS[2] deadlines, KEYS[3] place counter, KEYS[4] fencing counter, KEYS[5] receipts,
// KEYS[6...] the permit keys; all in one hash slot.

// Shared: keep(key, ms) makes at least ms remain; permits(only) is the KEYS range of permit `only` (0: all);
// announce publishes on the channel of ARGV[4] (take and release pass it there).
const COMMON = `local queue, deadlines, places, receipts = KEYS[1], KEYS[2], KEYS[3], KEYS[5]
local function keep(key, ms)
  if redis.call("PTTL", key) < tonumber(ms) then
    redis.call("PEXPIRE", key, ms)
  end
end
local function permits(only)
  if only > 0 then
    return 5 + only, 5 + only
  end
  return 6, #KEYS
end
local function holding(token, known)
  local first, last = permits(known)
  for i = first, last do
    if KEYS[i] and redis.call("GET", KEYS[i]) == token then
      return i
    end
  end
end
local function announce(message)
  redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(ARGV[4]), message)
end
local function bury(ids)
  redis.call("HSET", receipts, "x", buried(redis.call("HGET", receipts, "x"), 24, ids))
end
local function dequeue(...)
  redis.call("ZREM", queue, ...)
  redis.call("ZREM", deadlines, ...)
end
local function sweep(now)
  local expired = redis.call("ZRANGEBYSCORE", deadlines, "-inf", "(" .. now)
  for i = 1, #expired, 500 do
    dequeue(unpack(expired, i, math.min(i + 499, #expired)))
  end
end
`;

/**
 * Takes a permit for a token: one it holds (a re-run, a release's grant), else the first free one if it is
 * this waiter's turn (fair) or anyone's; else a fair waiter keeps (or takes) its place in line, unless on its
 * last try, which leaves the line but keeps (or sets) its deadline; a fair waiter that takes a permit leaves
 * the line too, its deadline moved to this try's: its earlier tries' late copies take nothing; nor do one's
 * handed a permit, once that permit is released (its name buried in "x"; its live try is told so, and goes on
 * under a fresh name). Nor do they confirm a hold of their token but their own (the try's take, a grant to its
 * waiter): the token may hold again for another acquisition (a `uuid` acquired anew), whose try, undone, the
 * copy would keep holding for nobody. As in
 * {@link takeLock}, a held lease only grows, and the receipt lists each try that took or confirmed the permit. A places counter deleted by hand restarts after the line's tail; the line's keys
 * outlive each entry by a minute (clock margin): places never repeat while anyone is in line; nothing stays.
 * A counter gone (expired with the line, or lost in a restart) starts again from the caller's clock in ms, not
 * 1: a waiter that reads a grant late must not take one for an earlier stay at its new, equal place. Places
 * repeat only if a line gave out more than one per millisecond, or a caller's clock is over its idle minute behind.
 * A new hold is announced, "acquired:<n>" when n permits are left free (freed unannounced: a lease ran out),
 * else "acquired"; a confirmed one is not: a waiter that heard a release must still try.
 * ARGV[1]  token; ARGV[2] request id; ARGV[3] lease, ms; ARGV[4] the channel's key (the lock key as Redis
 *          sees it: ioredis's keyPrefix included)
 * ARGV[5]  "1" when fair; ARGV[6] the waiter's name in line; ARGV[7] now, ms on the caller's clock
 * ARGV[8]  how long the entry stays, ms; ARGV[9] "1" on the last try; ARGV[10] the only permit to try, or 0
 * ARGV[11] "count" or "clock" for a fencing token, else ""; ARGV[12] fencing counter lifetime, ms
 * Returns  {1, permit, fencing token or 0, grant, kept, left} with a permit (1-based): grant 1 when held under
 *          the waiter's name (a grant), kept 1 when the token held it before the call (the hold confirmed, not
 *          made), left the hold's PTTL when a fair try confirmed a release's grant to its waiter (which may
 *          outlast the lease), else -1 (a same-uuid hold, another process's maybe, counts as the lease); {0, pttl, ahead, place} without: pttl the
 *          shortest remaining lease of a holder (-2 when no permit in range is held: permits are free but it
 *          is not this waiter's turn; -1 for a late copy, which takes nothing: held, for how long unknown, so
 *          that a live waiter that reaches it keeps its backoff), ahead the waiters before it, place its place
 *          in line (0: none; -1: the waiter's name is buried, spent: only a fresh one goes on).
 */
export const takePermit = /* @__PURE__ */ defineScript(
  "acquire",
  TRIES,
  COMMON,
  `local token, fair, member, now = ARGV[1], ARGV[5] == "1", ARGV[6], tonumber(ARGV[7])
local gone = redis.call("HGET", receipts, "x") or ""
if tried(gone, ARGV[2]) then
  return {0, -1, 0, 0}
end
local waiter = string.match(member, "^[^:]*")
local buried = fair and tried(gone, waiter)
local stay, deadline = tonumber(ARGV[8]), fair and redis.call("ZSCORE", deadlines, member)
local queued = deadline and redis.call("ZSCORE", queue, member)
local left = deadline and not queued and now + stay <= tonumber(deadline)
-- A try of a waiter in line sent no later than one that ran (its re-sent copy queued it; a later try): a copy
-- whose reply may go nowhere takes no free permit, held then for nobody (its waiter, leaving, would not free a
-- hold listed under the copy's id); the waiter's next try takes it.
local ran = queued and now + stay <= tonumber(deadline)
local first, last = permits(tonumber(ARGV[10]))
if fair then
  sweep(now)
end
local mine, free, frees, shortest = nil, nil, 0, -2
for i = first, last do
  local value = redis.call("GET", KEYS[i])
  if value == token then
    mine = i
    break
  end
  if not value then
    frees = frees + 1
    free = free or i
  else
    local pttl = redis.call("PTTL", KEYS[i])
    if shortest == -2 or (pttl >= 0 and (shortest < 0 or pttl < shortest)) then
      shortest = pttl
    end
  end
end
if left and not mine then
  return {0, -1, 0, 0}
end
local listed = " " .. (mine and redis.call("HGET", receipts, mine - 5) or "") .. " "
local own = string.find(listed, " " .. ARGV[2] .. " ", 1, true)
-- A live try of a waiter whose name a release buried (its grant confirmed and released by a same-uuid
-- acquisition): place -1 tells it its name is spent, and it goes on under a fresh one. A buried name confirms
-- no hold but its own take either: a copy of its try, landing before that name's leave, would keep a hold of
-- the token for another acquisition, once undone, held for nobody.
if buried and not own then
  return {0, -1, 0, -1}
end
-- A try sent no later than its waiter left, or than a try of it in line that ran (a late copy), confirms no
-- hold but its own: the one it took (a re-run of it), or a release handed its waiter, which it holds under the
-- waiter's name, adding its own to nothing: the waiter may have given up, and its leave must still free the
-- grant. The token may hold anew for another acquisition, whose try, undone, it would keep holding for nobody.
local heir = (left or ran) and not own
if heir and not string.find(listed, " " .. waiter .. " ", 1, true) then
  return {0, -1, 0, 0}
end
local function leave(listed)
  redis.call("ZREM", queue, member)
  if listed then
    redis.call("ZADD", deadlines, "XX", "GT", now + stay, member)
  else
    redis.call("ZADD", deadlines, "GT", now + stay, member)
  end
  keep(deadlines, stay + 60000)
end
local slot = mine
if not slot and free and not ran and (not fair or (redis.call("ZRANK", queue, member) or redis.call("ZCARD", queue)) < frees) then
  slot = free
end
if not slot then
  local ahead, place = 0, 0
  if fair and ARGV[9] == "1" then
    leave()
  elseif fair then
    place = redis.call("ZSCORE", queue, member)
    if not place then
      place = redis.call("INCR", places)
      if place == 1 then
        place = now
        redis.call("SET", places, place)
      end
      local tail = redis.call("ZRANGE", queue, -1, -1, "WITHSCORES")
      if tail[2] and tonumber(tail[2]) >= place then
        place = tonumber(tail[2]) + 1
        redis.call("SET", places, place)
      end
      redis.call("ZADD", queue, place, member)
    end
    redis.call("ZADD", deadlines, "GT", now + stay, member)
    ahead = redis.call("ZRANK", queue, member)
    local ms = stay + 60000
    keep(queue, ms)
    keep(deadlines, ms)
    keep(places, ms)
  end
  return {0, shortest, ahead, tonumber(place)}
end
if slot ~= mine then
  redis.call("SET", KEYS[slot], token, "PX", ARGV[3])
  redis.call("HSET", receipts, slot - 5, ARGV[2])
else
  keep(KEYS[slot], ARGV[3])
  local named = not heir and redis.call("HGET", receipts, slot - 5)
  if named then
    redis.call("HSET", receipts, slot - 5, confirmed(named, ARGV[2]))
  end
end
keep(receipts, tonumber(ARGV[3]))
if fair then
  leave(true)
end
if slot ~= mine and frees > 1 and tonumber(ARGV[10]) == 0 then
  announce("acquired:" .. (frees - 1))
elseif slot ~= mine then
  announce("acquired")
end
local fence
if ARGV[11] == "count" then
  fence = redis.call("INCR", KEYS[4])
  redis.call("PERSIST", KEYS[4])
elseif ARGV[11] == "clock" then
  local clock = redis.call("TIME")
  fence = math.max(tonumber(redis.call("GET", KEYS[4]) or "0") + 1, tonumber(clock[1]) * 1000000 + tonumber(clock[2]))
  if redis.call("PTTL", KEYS[4]) == -1 then
    redis.call("SET", KEYS[4], string.format("%.0f", fence))
  else
    redis.call("SET", KEYS[4], string.format("%.0f", fence), "PX", ARGV[12])
  end
end
local left = -1
if fair and slot == mine and string.find(listed, " " .. waiter .. " ", 1, true) then
  left = redis.call("PTTL", KEYS[slot])
end
return {1, slot - 5, fence or 0, heir and 1 or 0, slot == mine and 1 or 0, left}
`,
);

// remember(id, lease): field "r" lists the newest release call ids (at least 32, one per permit up to 256),
// and as many that found no permit of their token, releases and extends (marked `!`), so a re-run, or a late first copy its client re-sent, answers as the first
// run did (`RECENT`); kept 30 s, or the lease if longer, as a request may take a lease to land.
const REMEMBER = `local function remember(id, lease)
  redis.call("HSET", receipts, "r", recent(redis.call("HGET", receipts, "r"), math.min(math.max(32, #KEYS - 5), 256), id))
  keep(receipts, math.max(30000, tonumber(lease) or 0))
end
`;

/**
 * Frees a token's permit (ARGV[8], if known) and announces it. Fair: hands it on to the first in line (one
 * whose token holds a permit already is passed over, as its next try confirms that one: a uuid holds one
 * permit), who holds it for its grant with no request, and tells it: "granted:<its id in line>:<place>:
 * <grant ms>:<permit>"; with other permits free (freed unannounced: a lease or a dead waiter's grant ran
 * out), it announces a release too, so that the next in line take them. An undo (ARGV[3] "1") marks try
 * ARGV[2] on the permit's list, freeing it once all were abandoned (as {@link releaseLock}); a leave
 * (ARGV[6]) frees one handed the waiter. A leave that frees nothing while a permit is free and others wait
 * announces a release: the waiter it stood ahead of may be first now (its try was slow, or it gave up).
 * ARGV[1]  token; ARGV[2] call id, or the try (or waiter id) to match; ARGV[3] "1" to match it; ARGV[4] the
 *          channel's key; ARGV[5] "1" when fair; ARGV[6] the waiter leaving the line, or ""; ARGV[7] now, ms;
 *          ARGV[8] the permit to free (a quorum's lease of a uuid may hold another permit too), or 0: any;
 *          ARGV[9] the lease, ms, of a release (how long its receipt lives, 30 s at least), or how long a
 *          leaving waiter's entry stays (its tries sent before stay refused that long); ARGV[10] the id
 *          naming the hold: a release frees only that hold (`owns`), not a newer one of its token
 * Returns  1 when this call (or an earlier run of it, among the recent releases) freed a permit, else 0; a
 *          re-run answers as the first run did, and frees nothing when that one found no permit.
 */
export const releasePermit = /* @__PURE__ */ defineScript(
  "release",
  TRIES,
  RECENT,
  COMMON,
  REMEMBER,
  `local token, id, matching, fair = ARGV[1], ARGV[2], ARGV[3] == "1", ARGV[5] == "1"
if ARGV[6] ~= "" then
  redis.call("ZREM", queue, ARGV[6])
  if redis.call("ZADD", deadlines, "XX", "GT", "CH", tonumber(ARGV[7]) + tonumber(ARGV[9]), ARGV[6]) == 1 then
    keep(deadlines, tonumber(ARGV[9]) + 60000)
  end
end
local ran = not matching and answered(redis.call("HGET", receipts, "r"), id)
if ran then
  return ran
end
local held, frees, only, holds = nil, 0, tonumber(ARGV[8]) or 0, {}
for i = 6, #KEYS do
  local value = redis.call("GET", KEYS[i])
  if not value then
    frees = frees + 1
  else
    holds[value] = (holds[value] or 0) + 1
  end
  local mine = value == token and not held and (only == 0 or i == 5 + only)
  if mine and not matching then
    held = owns(redis.call("HGET", receipts, i - 5), ARGV[10]) and i or nil
  elseif mine then
    local listed = redis.call("HGET", receipts, i - 5)
    if listed and tried(listed, id) then
      local marked, left = abandon(listed, id)
      if left then
        redis.call("HSET", receipts, i - 5, marked)
      else
        held = i
      end
    end
  end
end
if not held then
  if not matching then
    remember(id .. "!", ARGV[9])
  end
  if matching and ARGV[6] == "" then
    bury(id .. "!")
    keep(receipts, 30000)
  end
  if ARGV[6] ~= "" and fair and frees > 0 and redis.call("ZCARD", queue) > 0 then
    announce("released")
  end
  return 0
end
bury(redis.call("HGET", receipts, held - 5) or id)
redis.call("DEL", KEYS[held])
frees = frees + 1
holds[token] = holds[token] - 1
redis.call("HSET", receipts, held - 5, id)
if not matching then
  remember(id, ARGV[9])
end
keep(receipts, 30000)
local message = "released"
if fair then
  sweep(tonumber(ARGV[7]))
  local line = redis.call("ZRANGE", queue, 0, 15, "WITHSCORES")
  for j = 1, #line, 2 do
    local waiter, grant, heir = string.match(line[j], "^([^:]*):(%d+):(.*)$")
    if (holds[heir] or 0) == 0 then
      redis.call("SET", KEYS[held], heir, "PX", grant)
      redis.call("HSET", receipts, held - 5, waiter)
      keep(receipts, tonumber(grant))
      redis.call("ZREM", queue, line[j])
      message = "granted:" .. waiter .. ":" .. line[j + 1] .. ":" .. grant .. ":" .. (held - 5)
      break
    end
  end
end
announce(message)
if message ~= "released" and frees > 1 then
  announce("released")
end
return 1
`,
);

/**
 * Adds ms to the lease of a token's permit, if it is the hold the lease names (ARGV[6], `owns`); its call id
 * is kept in the permit's field "e<n>" (the last 32 extends of it), or, when the token held no permit, in
 * field "r" with the releases, marked `!`: a re-run adds nothing. The permit's list gains `*`, as the grant
 * does in {@link extendLock}.
 * ARGV[1]  token; ARGV[2] call id; ARGV[3] ms to add (0 adds nothing); ARGV[4] the permit held if known
 *          (only it counts: on a quorum another permit of the token is another lease's), or 0: any;
 *          ARGV[5] the lease, ms (how long the receipt lives, 30 s at least); ARGV[6] the id naming the hold
 * Returns  {1, pttl} when the token holds a permit after the call; {0, -2} when it holds none.
 */
export const extendPermit = /* @__PURE__ */ defineScript(
  "extend",
  TRIES,
  RECENT,
  COMMON,
  REMEMBER,
  `local ran = answered(redis.call("HGET", receipts, "r"), ARGV[2])
local at = ran ~= 0 and holding(ARGV[1], tonumber(ARGV[4]))
local listed, extends = at and redis.call("HGET", receipts, at - 5), at and "e" .. (at - 5)
ran = ran or (at and answered(redis.call("HGET", receipts, extends), ARGV[2]))
if not at or not (ran or owns(listed, ARGV[6])) then
  if not ran then
    remember(ARGV[2] .. "!", ARGV[5])
  end
  return {0, -2}
end
local remaining = redis.call("PTTL", KEYS[at])
if remaining == -1 or ran then
  return {1, remaining}
end
local target = remaining + tonumber(ARGV[3])
redis.call("PEXPIRE", KEYS[at], target)
if listed and not tried(listed, "*") then
  redis.call("HSET", receipts, at - 5, listed .. " *")
end
redis.call("HSET", receipts, extends, recent(redis.call("HGET", receipts, extends), 32, ARGV[2]))
keep(receipts, math.max(target, 30000, tonumber(ARGV[5]) or 0))
return {1, target}
`,
);

/**
 * Auto-extend's renewal of a permit, and its status check: at least ARGV[2] ms remain, never less than left.
 * Whoever asks holds from now on (a uuid seeded elsewhere starts a lease here): its list gains `*`, so no undo
 * or leave of a try abandoned earlier frees the permit (an extend's `*` stays on it);
 * unless ARGV[2] is -1, which only looks, or ARGV[4] is "0" (as in {@link renewLock}).
 * ARGV[1]  token; ARGV[2] lease, ms (0: status; -1: status that confirms nothing); ARGV[3] the permit held, if known (only it counts), or 0
 * ARGV[4]  "0": a renewal of a hold a try of this process took, which adds no `*`; ARGV[5] the id naming the
 *          hold, or "" (as in {@link renewLock}: a late copy leaves a newer hold of the token alone)
 * Returns  {1, pttl, permit} when the token holds a permit, {0, -2} otherwise.
 */
export const renewPermit = /* @__PURE__ */ defineScript(
  "renew",
  TRIES,
  COMMON,
  `local at, lease = holding(ARGV[1], tonumber(ARGV[3])), tonumber(ARGV[2])
local listed = at and redis.call("HGET", receipts, at - 5)
if not at or not owns(listed, ARGV[5]) then
  return {0, -2}
end
if listed and lease >= 0 and ARGV[4] ~= "0" and not tried(listed, "*") then
  redis.call("HSET", receipts, at - 5, listed .. " *")
end
local remaining = redis.call("PTTL", KEYS[at])
if remaining >= 0 and remaining < lease then
  redis.call("PEXPIRE", KEYS[at], lease)
  remaining = lease
end
if lease > 0 then
  keep(receipts, remaining)
end
return {1, remaining, at - 5}
`,
);
