/**
 * Lua: `order(id)`, the order of a request id (`<order>-<random>`, see `newCallId`), so a script
 * can tell a late request from a newer one of the same token; 0 for anything else, nil included.
 */
export const ORDER = `local function order(id)
  return tonumber(string.match(id or "", "^%d+") or "0")
end
`;
