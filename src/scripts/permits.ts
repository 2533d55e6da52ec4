import { defineScript } from "./script";

// Scripts over a set of permit keys, for semaphores (one key per permit) and for fair locks (the
// lock key as the only permit). Each permit key holds its holder's token with a lease, so an
// expired holder frees its permit without anyone cleaning up, by Redis's own clock; no script reads
// the clock or builds a key: every key comes in KEYS.
//
// Fair waiters queue in two sorted sets: `queue` orders them by arrival (score: the place in line,
// from a counter that never repeats a place while the line lives, so a place names one stay in
// line), `deadlines` says until when each entry stays (score: milliseconds on the waiters' own
// clocks, passed in ARGV). A waiter refreshes its deadline with every try; one that left or died
// stops trying, and its entry is dropped once its deadline passed. With k permits free, the first k
// waiters of the queue may take one; anyone else waits in line.

/**
 * The start of every permit-taking script: drops expired queue entries (fair), then looks at every
 * permit key: one this token already holds (a re-run of a call whose reply was lost), the first
 * free one, how many are free, and the holder whose lease ends first.
 */
const FIND_PERMIT = `local token, fair = ARGV[1], ARGV[4] == "1"
local queue, deadlines, places = KEYS[1], KEYS[2], KEYS[4]
local first, last = 5, #KEYS
local only = tonumber(ARGV[8])
if only > 0 then
  first, last = 4 + only, 4 + only
end
if fair then
  local expired = redis.call("ZRANGEBYSCORE", deadlines, "-inf", "(" .. ARGV[5])
  for i = 1, #expired, 500 do
    local chunk = {unpack(expired, i, math.min(i + 499, #expired))}
    redis.call("ZREM", queue, unpack(chunk))
    redis.call("ZREM", deadlines, unpack(chunk))
  end
end
local mine, free, frees, shortest, holder = nil, nil, 0, -2, false
for i = first, last do
  local value = redis.call("GET", KEYS[i])
  if value == token then
    mine = i
    break
  end
  if value == false then
    frees = frees + 1
    if free == nil then
      free = i
    end
  else
    local pttl = redis.call("PTTL", KEYS[i])
    if shortest == -2 or (pttl >= 0 and (shortest < 0 or pttl < shortest)) then
      shortest, holder = pttl, value
    end
  end
end
local slot = mine
if slot == nil and free ~= nil then
  if fair then
    local ahead = redis.call("ZRANK", queue, token)
    if ahead == false then
      ahead = redis.call("ZCARD", queue)
    end
    if ahead < frees then
      slot = free
    end
  else
    slot = free
  end
end
if slot == nil then
  local ahead, seq = 0, 0
  if fair then
    if ARGV[7] == "1" then
      redis.call("ZREM", queue, token)
      redis.call("ZREM", deadlines, token)
    else
      local score = redis.call("ZSCORE", queue, token)
      if score == false then
        score = redis.call("INCR", places)
        -- A counter deleted by hand restarts: places still follow the line's tail.
        local tail = redis.call("ZRANGE", queue, -1, -1, "WITHSCORES")
        if tail[2] and tonumber(tail[2]) >= score then
          score = tonumber(tail[2]) + 1
          redis.call("SET", places, score)
        end
        redis.call("ZADD", queue, score, token)
      end
      seq = tonumber(score)
      redis.call("ZADD", deadlines, tonumber(ARGV[5]) + tonumber(ARGV[6]), token)
      ahead = redis.call("ZRANK", queue, token)
      -- The counter outlives every entry (and a margin for clock skew), so places never repeat
      -- while anyone is in line.
      local keep = tonumber(ARGV[6]) + 60000
      if redis.call("PTTL", places) < keep then
        redis.call("PEXPIRE", places, keep)
      end
    end
  end
  local fingerprint = 0
  if holder then
    fingerprint = tonumber(string.sub(redis.sha1hex(holder), 1, 8), 16)
  end
  return {0, shortest, fingerprint, ahead, seq}
end
redis.call("SET", KEYS[slot], token, "PX", ARGV[2])
if fair then
  redis.call("ZREM", queue, token)
  redis.call("ZREM", deadlines, token)
end
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(ARGV[3]), "acquired")
`;

// The take scripts below share their keys, arguments and refusal:
//
// KEYS[1]  queue (sorted set: waiters by arrival), KEYS[2] deadlines (sorted set), KEYS[3] fencing
//          counter, KEYS[4] the counter of places in line, KEYS[5...] the permit keys, all in one
//          hash slot
// ARGV[1]  token; ARGV[2] lease, ms; ARGV[3] the base key, which names the event channel
// ARGV[4]  "1" for a fair acquire (queue in line), "0" otherwise
// ARGV[5]  now, ms on the caller's clock; ARGV[6] how long the caller's queue entry stays, ms
// ARGV[7]  "1" when this is the caller's last try: it leaves the queue if it does not get a permit
// ARGV[8]  1-based index of the only permit to try (a quorum takes the same permit everywhere), or 0
// Returns  {0, pttl, holder, ahead, seq} without a permit: pttl the shortest remaining lease of a
//          holder (-2 when permits are free but not this caller's turn), holder a 32-bit
//          fingerprint of that holder's token, ahead how many waiters are before the caller, seq
//          its place in line (never repeated while the line lives); 0s when not fair.

/**
 * Takes a permit, without a fencing token.
 *
 * KEYS, ARGV and the refusal as described above the take scripts.
 *          {1, permit} with a permit (its 1-based index).
 */
export const takePermit = defineScript({
  name: "acquire permit",
  source: `${FIND_PERMIT}return {1, slot - 4}
`,
  sha1: "0dcf5c5182ddb29f1fa94c0ffe838c384ae10fae",
  keyLockedSha1: "ac30dca5eb3b1d11077d1ee489665fb5ff5dbe18",
});

/**
 * Takes a permit and issues a fencing token from a counter that never expires (reads no clock).
 *
 * KEYS, ARGV and the refusal as described above the take scripts.
 *          {1, permit, fencing token} with a permit.
 */
export const takePermitWithCountedFence = defineScript({
  name: "acquire permit",
  source: `${FIND_PERMIT}local fence = redis.call("INCR", KEYS[3])
redis.call("PERSIST", KEYS[3])
return {1, slot - 4, fence}
`,
  sha1: "68e3510f054b95ee8ab88aedf088a4450f170937",
  keyLockedSha1: "7cf7e9f9e63ffb940407922c4cf4c6c9227a31db",
});

/**
 * Takes a permit and issues a fencing token never below Redis's clock in microseconds.
 *
 * KEYS, ARGV and the refusal as described above the take scripts.
 * ARGV[9]  fencing counter lifetime, ms
 *          {1, permit, fencing token} with a permit.
 */
export const takePermitWithClockFence = defineScript({
  name: "acquire permit",
  source: `${FIND_PERMIT}local clock = redis.call("TIME")
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local fence = math.max(tonumber(redis.call("GET", KEYS[3]) or "0") + 1, now)
redis.call("SET", KEYS[3], string.format("%.0f", fence), "PX", ARGV[9])
return {1, slot - 4, fence}
`,
  sha1: "2345052206eba7878a41ba998bc896b315c671a8",
  keyLockedSha1: "760a3724c00a79321e5aab374dd822ec1ae41e38",
});

/**
 * Frees the permit this token holds and leaves a receipt of the call, so a re-run answers the
 * same. Fair: hands the freed permit straight to the one waiter it entitles (the k-th in line when
 * k permits are free), for a short grant (ARGV[6]); the waiter, told
 * "granted:<sha1>:<place>:<grant>", starts holding without a request of its own and tops the grant
 * up to its lease when it holds longer. The message names the waiter by the SHA-1 of its token (the
 * token cannot be read back from its hash) and by its place in line, which no later stay in line
 * repeats: a waiter that reads a grant late, after it took the permit by a try of its own and queued
 * again, knows the grant is not for its present stay. A waiter that died meanwhile holds the permit
 * for that grant at most. Otherwise the release is announced as "released".
 *
 * KEYS[1]  queue, KEYS[2] deadlines, KEYS[3] receipt, KEYS[4...] the permit keys
 * ARGV[1]  token; ARGV[2] call id; ARGV[3] the base key; ARGV[4] "1" when fair; ARGV[5] now, ms
 * ARGV[6]  the grant, ms (fair)
 * Returns  1 when this call freed a permit (or a re-run of it did), 0 when the token held none.
 */
export const releasePermit = defineScript({
  name: "release permit",
  source: `if redis.call("GET", KEYS[3]) == ARGV[2] then
  return 1
end
local released, frees = nil, 0
for i = 4, #KEYS do
  local value = redis.call("GET", KEYS[i])
  if value == ARGV[1] then
    redis.call("DEL", KEYS[i])
    released = i
    frees = frees + 1
  elseif value == false then
    frees = frees + 1
  end
end
if released == nil then
  return 0
end
redis.call("SET", KEYS[3], ARGV[2], "PX", 30000)
local message = "released"
if ARGV[4] == "1" then
  local expired = redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[5])
  for i = 1, #expired, 500 do
    local chunk = {unpack(expired, i, math.min(i + 499, #expired))}
    redis.call("ZREM", KEYS[1], unpack(chunk))
    redis.call("ZREM", KEYS[2], unpack(chunk))
  end
  local entitled = redis.call("ZRANGE", KEYS[1], frees - 1, frees - 1, "WITHSCORES")
  if entitled[1] then
    redis.call("SET", KEYS[released], entitled[1], "PX", ARGV[6])
    redis.call("ZREM", KEYS[1], entitled[1])
    redis.call("ZREM", KEYS[2], entitled[1])
    message = "granted:" .. redis.sha1hex(entitled[1]) .. ":" .. entitled[2] .. ":" .. ARGV[6]
  end
end
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(ARGV[3]), message)
return 1
`,
  sha1: "aa40c21a0c9f0dba35c83650bf0d8793108b3bf7",
  keyLockedSha1: "5869e1ec7de0467093e4c85b0413c53b598f170c",
});

/**
 * Adds milliseconds to the lease of the permit this token holds; a receipt makes a re-run add
 * nothing, and the re-run still checks the holder (see `addLeaseIfOwned`).
 *
 * KEYS[1]  receipt, KEYS[2...] the permit keys
 * ARGV[1]  token; ARGV[2] call id; ARGV[3] milliseconds to add (0 only checks)
 * Returns  {1, pttl} when the token holds a permit after the call; {0, -2} when it holds none.
 */
export const addLeaseToPermit = defineScript({
  name: "extend permit",
  source: `for i = 2, #KEYS do
  if redis.call("GET", KEYS[i]) == ARGV[1] then
    local remaining = redis.call("PTTL", KEYS[i])
    if remaining == -1 or redis.call("GET", KEYS[1]) == ARGV[2] then
      return {1, remaining}
    end
    local target = remaining + tonumber(ARGV[3])
    redis.call("PEXPIRE", KEYS[i], target)
    redis.call("SET", KEYS[1], ARGV[2], "PX", 30000)
    return {1, target}
  end
end
return {0, -2}
`,
  sha1: "930fcab153f320cb49a25224e73eb20096f1ab75",
  keyLockedSha1: "01317a46c6fb76d60c7228ba19240ce2949c5af8",
});

/**
 * Tells whether this token holds a permit.
 *
 * KEYS[1...] the permit keys
 * ARGV[1]  token
 * Returns  {1, pttl} when it does, {0, -2} otherwise.
 */
export const checkPermit = defineScript({
  name: "permit status",
  source: `for i = 1, #KEYS do
  if redis.call("GET", KEYS[i]) == ARGV[1] then
    return {1, redis.call("PTTL", KEYS[i])}
  end
end
return {0, -2}
`,
  sha1: "7c0683305299d405b606ccef2eec1156ca82f949",
  keyLockedSha1: "3a83a1a79617c96970970a5e21c571247cabf071",
});

/**
 * The renewal of auto-extend for a permit: at least a lease remains, never less than is left.
 *
 * KEYS[1...] the permit keys
 * ARGV[1]  token; ARGV[2] lease, ms
 * Returns  {1, pttl} when the token holds a permit, {0, -2} otherwise.
 */
export const renewPermit = defineScript({
  name: "renew permit",
  source: `for i = 1, #KEYS do
  if redis.call("GET", KEYS[i]) == ARGV[1] then
    local remaining = redis.call("PTTL", KEYS[i])
    local lease = tonumber(ARGV[2])
    if remaining >= 0 and remaining < lease then
      redis.call("PEXPIRE", KEYS[i], lease)
      remaining = lease
    end
    return {1, remaining}
  end
end
return {0, -2}
`,
  sha1: "f004fe9ac67190ee92b81ec39bae9012df7dd263",
  keyLockedSha1: "8e66f379355e6286e29910a3f2a1e271d8b40382",
});

/**
 * Takes a waiter out of the fair line: it stopped waiting (gave up, or its last try was abandoned).
 * A release may have handed it a permit meanwhile, which nobody will use: that permit is freed and
 * handed on to the next waiter it entitles, as a release would, so it does not sit idle for a grant.
 *
 * KEYS[1]  queue, KEYS[2] deadlines, KEYS[3...] the permit keys (none: only leave the line)
 * ARGV[1]  token; ARGV[2] the base key; ARGV[3] now, ms; ARGV[4] the grant, ms
 * Returns  1 when the waiter was in line or held a permit it was handed, 0 otherwise.
 */
export const leaveQueue = defineScript({
  name: "leave queue",
  source: `redis.call("ZREM", KEYS[2], ARGV[1])
local left = redis.call("ZREM", KEYS[1], ARGV[1])
local handed, frees = nil, 0
for i = 3, #KEYS do
  local value = redis.call("GET", KEYS[i])
  if value == ARGV[1] then
    redis.call("DEL", KEYS[i])
    handed = i
    frees = frees + 1
  elseif value == false then
    frees = frees + 1
  end
end
if handed == nil then
  return left
end
local expired = redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[3])
for i = 1, #expired, 500 do
  local chunk = {unpack(expired, i, math.min(i + 499, #expired))}
  redis.call("ZREM", KEYS[1], unpack(chunk))
  redis.call("ZREM", KEYS[2], unpack(chunk))
end
local message = "released"
local entitled = redis.call("ZRANGE", KEYS[1], frees - 1, frees - 1, "WITHSCORES")
if entitled[1] then
  redis.call("SET", KEYS[handed], entitled[1], "PX", ARGV[4])
  redis.call("ZREM", KEYS[1], entitled[1])
  redis.call("ZREM", KEYS[2], entitled[1])
  message = "granted:" .. redis.sha1hex(entitled[1]) .. ":" .. entitled[2] .. ":" .. ARGV[4]
end
redis.call("PUBLISH", "lock-events:" .. redis.sha1hex(ARGV[2]), message)
return 1
`,
  sha1: "367130a95bc2b7ae645b7fa60ae86b5c666b7e50",
  keyLockedSha1: "b6ad0a7c178557461b24313a992045e2233618f8",
});
