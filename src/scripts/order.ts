/** Lua `order(id)`: the order of a request id (`<order>-<random>`, see `newCallId`), else 0 (nil too). */
export const ORDER = `local function order(id)
  return tonumber(string.match(id or "", "^%d+") or "0")
end
`;
