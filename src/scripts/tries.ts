/**
 * Lua helpers over a hold's list of tries: the request ids, space-separated, of every try that took or
 * confirmed a hold (a lock's grant key, a permit's field of the receipts hash), each marked `!` once its
 * caller abandoned it and its undo came. An undo frees the hold only when every try on the list was
 * abandoned: a try that found its token holding took nothing, and whatever took the hold may still have
 * it, in this process or another. A list of 16 becomes `*`, which no undo frees (the hold then ends with its
 * lease, or its holder's release). An extend or a release starts a new list.
 * `tried(list, id)`: whether `id` is on the list; `confirmed(list, id)`: the list with `id` on it;
 * `abandon(list, id)`: the list with `id` marked, and whether a try not abandoned is left on it.
 */
export const TRIES = `local function tried(list, id)
  local padded = " " .. list .. " "
  return string.find(padded, " " .. id .. " ", 1, true) or string.find(padded, " " .. id .. "! ", 1, true)
end
local function confirmed(list, id)
  if tried(list, id) then return list end
  if select(2, string.gsub(list, " ", "")) >= 15 then return "*" end
  return list .. " " .. id
end
local function abandon(list, id)
  local marked = string.gsub(" " .. list .. " ", " " .. string.gsub(id, "%p", "%%%0") .. " ", " " .. id .. "! ")
  return string.sub(marked, 2, -2), string.find(marked, "[^!] ") ~= nil
end
`;
