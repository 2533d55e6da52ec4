import { defineScript } from "./script";

/**
 * Tells whether the lock holds this token. The comparison runs in Lua because the HTTP client
 * JSON-parses replies: a token "123" would come back to JavaScript as the number 123.
 *
 * KEYS[1]  lock key
 * ARGV[1]  token
 * Returns  {1, pttl} when the key holds this token (pttl: remaining lease in milliseconds);
 *          {0, -2} otherwise.
 */
export const checkOwner = defineScript({
  name: "status",
  source: `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return {1, redis.call("PTTL", KEYS[1])}
end
return {0, -2}
`,
  sha1: "9c86a7ff400fb50857c95807c0a138aa21b7417d",
  keyLockedSha1: "11eea616489f3800d30f1a15cca5eb3179acd1cf",
});
