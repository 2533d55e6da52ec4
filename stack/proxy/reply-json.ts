import { RespError, RespInteger, type RespReply, RespStatus } from "../resp/reply";
import type { ResponseEncoding } from "./response-encoding";

/**
 * Renders a Redis reply as JSON text the way Upstash does.
 *
 * - Every string, bulk or status (`OK`, `PONG`, `QUEUED`), at every depth, is base64 in `base64` mode. The
 *   client decodes an unencoded `OK` inside an array to garbage, so no string is exempt.
 * - In `plain` mode bytes are decoded as UTF-8, invalid sequences becoming U+FFFD.
 * - Integers are written as their exact digits (JSON numbers beyond 2^53 stay exact on the wire).
 * - An error nested inside an array (a Lua table holding a `redis.pcall` error) has no documented Upstash
 *   form; it is rendered as its message string, encoded like any other string so the client decodes it back.
 */
export function replyToJson(reply: RespReply, encoding: ResponseEncoding): string {
  if (reply === null) {
    return "null";
  }
  if (Buffer.isBuffer(reply)) {
    return bytesToJson(reply, encoding);
  }
  if (Array.isArray(reply)) {
    return `[${reply.map((item) => replyToJson(item, encoding)).join(",")}]`;
  }
  if (reply instanceof RespInteger) {
    // The parser only creates integers from validated digits, so they are safe to splice in.
    return reply.digits;
  }
  if (reply instanceof RespStatus) {
    return bytesToJson(Buffer.from(reply.text), encoding);
  }
  return bytesToJson(Buffer.from(reply.message), encoding);
}

/**
 * One pipeline or transaction entry: `{"error": ...}` for an error reply (never encoded, no `result` key),
 * otherwise `{"result": ...}` with the key present even for nil.
 */
export function entryToJson(reply: RespReply, encoding: ResponseEncoding): string {
  if (reply instanceof RespError) {
    return `{"error":${JSON.stringify(reply.message)}}`;
  }
  return `{"result":${replyToJson(reply, encoding)}}`;
}

function bytesToJson(bytes: Buffer, encoding: ResponseEncoding): string {
  // Base64 text never needs JSON escaping.
  return encoding === "base64" ? `"${bytes.toString("base64")}"` : JSON.stringify(bytes.toString("utf8"));
}
