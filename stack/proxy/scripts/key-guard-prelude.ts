import type { CommandAccess, KeySpec } from "./command-access";

/**
 * The Lua the proxy puts in front of a script flagged `allow-key-locking`, written here for reading and
 * collapsed to one line (see {@link keyGuardPrelude}). It shadows the global `redis` with a local table whose
 * `call` and `pcall` refuse what Upstash refuses under the flag, then delegate to the real functions:
 *
 * - every key a command names, found with Redis's own key specs, must be one of KEYS;
 * - commands that reach the whole database (FLUSHDB, KEYS, SCAN...) and commands whose keys cannot be found
 *   (SORT) are refused;
 * - a command whose name is not among the script's string literals has no spec here and is refused too,
 *   rather than let through unchecked.
 *
 * A refusal is an error table like a failed command: `pcall` returns it, `call` raises it.
 *
 * `call` is a `coroutine.wrap` function, which is a C function: when it raises, Redis reports the line of
 * the script that called it (a Lua wrapper would be reported instead, on the prelude's line, and
 * `return redis.call(...)`, a tail call, would lose the caller's line altogether). A coroutine that raised is
 * dead, so a fresh one is made the next time `redis.call` is read; a script that keeps `redis.call` in a local,
 * catches its error with `pcall` and calls it again gets "cannot resume dead coroutine".
 *
 * The specs table maps a lowercase command name to: a list of spec tuples; `{sub = {...}}`, the same by
 * subcommand, for a container; 0 for a command Redis refuses in scripts anyway; 1 for a database-wide
 * command; 2 for a command whose keys cannot be found. A spec tuple is `{begin, a, b, find, c, d, e}`, with
 * positions counting the command name as 0: `begin` 1 is a fixed position `a`, `begin` 2 the argument after
 * keyword `a` (lowercase) searched from `b`; `find` 1 is a range (lastkey `c`, keystep `d`, limit `e`),
 * `find` 2 a key count (keynumidx `c`, firstkey `d`, keystep `e`), all as Redis's `getKeysUsingKeySpecs`
 * reads them. `undeclared` returns the first key not in KEYS, nil when there is none, and false when the
 * arguments do not locate the keys.
 */
const GUARD_LUA = `
local redis = (function(real, keys, specs)
  local pcallReal, lower, tostr, declared = real.pcall, string.lower, tostring, {}
  for _, key in ipairs(keys) do declared[key] = true end
  local function pack(...) return {...}, select("#", ...) end
  local function shown(value) return (string.gsub(string.sub(tostr(value), 1, 200), "%c", "?")) end
  local function undeclared(spec, args, argc)
    local first = 0
    if spec[1] == 1 then
      first = spec[2]
    else
      local from, to, direction = spec[3], argc - 2, 1
      if from < 0 then from, to, direction = argc + from, 1, -1 end
      for i = from, to, direction do
        if lower(tostr(args[i + 1])) == spec[2] then first = i + 1 break end
      end
      if first == 0 then return nil end
    end
    local last, step = 0, spec[6]
    if spec[4] == 1 then
      if spec[5] >= 0 then last = first + spec[5]
      elseif spec[7] == 0 then last = argc + spec[5]
      else last = first + math.floor((argc - first) / spec[7]) + spec[5] end
    else
      local count = tostr(args[first + spec[5] + 1])
      if spec[5] >= argc - first or not string.match(count, "^%d+$") then return false end
      first = first + spec[6]
      last, step = first + tonumber(count) - 1, spec[7]
    end
    if last >= argc or last < first or first >= argc then return false end
    for i = first, last, step do
      local key = tostr(args[i + 1])
      if not declared[key] then return key end
    end
    return nil
  end
  local function refusal(problem, command, key)
    local label = shown(command)
    if problem == nil then
      return "ERR the local proxy cannot check command '" .. label .. "' under allow-key-locking: it checks only commands named in a string literal of the script"
    elseif problem == 1 then
      return "ERR command '" .. label .. "' needs access to the whole database, which scripts flagged allow-key-locking may not have"
    elseif problem == 2 then
      return "ERR the local proxy cannot tell which keys command '" .. label .. "' touches, so scripts flagged allow-key-locking may not call it"
    end
    return "ERR key '" .. shown(key) .. "' used by '" .. label .. "' is not declared in KEYS; scripts flagged allow-key-locking may touch only keys passed in KEYS"
  end
  local function violation(args, argc)
    local name = args[1]
    if argc == 0 or (type(name) ~= "string" and type(name) ~= "number") then return nil end
    local command = lower(name)
    local entry = specs[command]
    if type(entry) == "table" and entry.sub ~= nil then
      if argc < 2 then return nil end
      local sub = lower(tostr(args[2]))
      command, entry = command .. " " .. sub, entry.sub[sub]
    end
    if entry == 0 then return nil end
    if type(entry) ~= "table" then return refusal(entry, command) end
    for _, spec in ipairs(entry) do
      local key = undeclared(spec, args, argc)
      if key == false then return refusal(2, command) end
      if key ~= nil then return refusal(3, command, key) end
    end
    return nil
  end
  local dead, wrapped = true, nil
  local function serve(...)
    local args, argc = pack(...)
    while true do
      local failure, reply = violation(args, argc), nil
      if failure then reply = {err = failure} else reply = pcallReal(unpack(args, 1, argc)) end
      if type(reply) == "table" and reply.err ~= nil then dead = true error(reply) end
      args, argc = pack(coroutine.yield(reply))
    end
  end
  return setmetatable({
    pcall = function(...)
      local failure = violation(pack(...))
      if failure then return {err = failure} end
      return pcallReal(...)
    end,
  }, {
    __index = function(_, field)
      if field ~= "call" then return real[field] end
      if dead then wrapped, dead = coroutine.wrap(serve), false end
      return wrapped
    end,
  })
end)(redis, KEYS, `;

/** {@link GUARD_LUA} on one line, so that it takes the place of the shebang without moving later lines. */
const GUARD_LINE = GUARD_LUA.trim().replace(/\s*\n\s*/g, " ");

/**
 * The prelude for one script: the guard and the specs of the commands it names, on one line ending in `;`
 * (so a script line that starts with `(` after it is not read as a call).
 *
 * @param commands Access of the commands named in the script's string literals.
 * @param words Every command-like word among those literals, which selects the subcommands to include.
 */
export function keyGuardPrelude(
  commands: ReadonlyMap<string, CommandAccess>,
  words: ReadonlySet<string>,
): string {
  const entries = [...commands].map(([name, access]) => `["${name}"]=${luaEntry(access, words)}`);
  return `${GUARD_LINE}{${entries.join(",")}});`;
}

function luaEntry(access: CommandAccess, words: ReadonlySet<string>): string {
  switch (access.kind) {
    case "refused-by-redis":
      return "0";
    case "database":
      return "1";
    case "opaque":
      return "2";
    case "keys":
      return `{${access.specs.map(luaKeySpec).join(",")}}`;
    case "container": {
      const named = [...access.subcommands].filter(([sub]) => words.has(sub));
      return `{sub={${named.map(([sub, subAccess]) => `["${sub}"]=${luaEntry(subAccess, words)}`).join(",")}}}`;
    }
  }
}

function luaKeySpec({ begin, find }: KeySpec): string {
  const start = "index" in begin ? `1,${begin.index},0` : `2,"${begin.keyword}",${begin.startFrom}`;
  const keys =
    "limit" in find
      ? `1,${find.lastKey},${find.keyStep},${find.limit}`
      : `2,${find.keyNumIndex},${find.firstKey},${find.keyStep}`;
  return `{${start},${keys}}`;
}
