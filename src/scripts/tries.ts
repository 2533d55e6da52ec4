/**
 * Lua helpers over a hold's list of tries (a lock's grant key, a permit's receipts field): the request ids,
 * space-separated, of the tries that took or confirmed it, each marked `!` once its undo came. An undo frees
 * the hold only once every try on it was abandoned: one that found its token holding took nothing, and what
 * took the hold may still have it. `*`, which no undo frees (the hold ends with its lease or a release), is
 * added by an extend, a renewal or a status check. A list reads newest first after its first entry (the
 * hold's taker): a confirming try, or the undo of one that has not arrived, goes right after the taker (`inserted`); the tries
 * of the holds before come after them. Once 64 are listed, a confirming try leaves the taker, itself, the
 * newest 40 unabandoned others, and the newest abandoned ones up to 64 entries: abandoned (undone, refused,
 * buried) entries never push a live lease's out. Only when a live one is dropped (over 40) is `*` added:
 * the undos of the listed tries must not free the hold its lease still has; a `*` already listed stays.
 * Once the hold is freed the list stays 30 s, naming tries whose late copies must take nothing.
 * `tried(list, id)`; `confirmed(list, id)`: the list with `id` on it; `buried(list, most, first)`: `first`,
 * then up to `most` entries of `list`, the newest, marked `!` (a new hold's list that still names the tries
 * of the last, whose late copies must take nothing, none of them holding it); `abandon(list, id)`: it with `id`
 * marked, and whether any try is unabandoned. `owns(list, name)`: whether a release or extend of the hold
 * that try (or fair hand-over) `name` gave may act on the hold `list` names: `name` is on it unabandoned. A
 * newer hold of the same token lists it marked or not at all, so a late copy of a call for an earlier hold
 * ends nothing there. A call naming nothing (a token seeded elsewhere), or a hold whose list names no try
 * unabandoned (none, or `*` and undone tries on a hold that was not a try's: a 0.2 holder's), goes by the token.
 */
export const TRIES = `local function tried(list, id)
  local padded = " " .. list .. " "
  return string.find(padded, " " .. id .. " ", 1, true) or string.find(padded, " " .. id .. "! ", 1, true)
end
local function inserted(list, id)
  return (string.gsub(list, "^(%S+)", "%1 " .. id, 1))
end
local function confirmed(list, id)
  if tried(list, id) then return list end
  if select(2, string.gsub(list, " ", "")) < 63 then return inserted(list, id) end
  local entries, live = {}, 0
  for entry in string.gmatch(list, "%S+") do
    entries[#entries + 1] = entry
    if #entries > 1 and entry ~= "*" and string.sub(entry, -1) ~= "!" then live = live + 1 end
  end
  local star = (live > 40 or tried(list, "*")) and entries[1] ~= "*"
  local kept, named, room = {entries[1]}, 0, 62 - math.min(live, 40) - (star and 1 or 0)
  for i = 2, #entries do
    local entry = entries[i]
    local undone = string.sub(entry, -1) == "!"
    if entry ~= "*" and ((undone and room > 0) or (not undone and named < 40)) then
      kept[#kept + 1] = entry
      room, named = room - (undone and 1 or 0), named + (undone and 0 or 1)
    end
  end
  if star then kept[#kept + 1] = "*" end
  return inserted(table.concat(kept, " "), id)
end
local function buried(list, most, first)
  local kept = {first}
  for id in string.gmatch(list or "", "%S+") do
    if #kept > most then break end
    if id ~= "*" then
      kept[#kept + 1] = string.sub(id, -1) == "!" and id or id .. "!"
    end
  end
  return table.concat(kept, " ")
end
local function abandon(list, id)
  local marked = string.gsub(" " .. list .. " ", " " .. string.gsub(id, "%p", "%%%0") .. " ", " " .. id .. "! ")
  return string.sub(marked, 2, -2), string.find(marked, "[^!] ") ~= nil
end
local function owns(list, name)
  if not list or (name or "") == "" then return true end
  local named = false
  for id in string.gmatch(list, "%S+") do
    if id == name then return true end
    named = named or (id ~= "*" and string.sub(id, -1) ~= "!")
  end
  return not named
end
`;

/**
 * `recent(list, most, first)`: `first`, then entries of `list` as they are: the newest call ids a receipt
 * keeps, `most` that took effect and `most` marked `!`, whose call found the hold gone; kept apart, so that
 * misses (any expired holder's release) never push out a release that took effect. `answered(list, id)`: 1
 * when the call took effect, 0 when it found the hold gone, nil when it has not run. A miss is kept too: its
 * late first copy (the client re-sent it) must not release or extend a newer hold of the same token. Apart
 * from {@link TRIES}: only releases and extends keep receipts, and a take's first, full EVAL need not carry it.
 */
export const RECENT = `local function recent(list, most, first)
  local kept, counts = {first}, {[string.sub(first, -1) == "!"] = 1}
  for id in string.gmatch(list or "", "%S+") do
    local miss = string.sub(id, -1) == "!"
    if (counts[miss] or 0) < most then
      kept[#kept + 1] = id
      counts[miss] = (counts[miss] or 0) + 1
    end
  end
  return table.concat(kept, " ")
end
local function answered(list, id)
  local padded = " " .. (list or "") .. " "
  if string.find(padded, " " .. id .. " ", 1, true) then return 1 end
  if string.find(padded, " " .. id .. "! ", 1, true) then return 0 end
end
`;
