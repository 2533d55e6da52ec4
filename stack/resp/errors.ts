/**
 * Errors thrown by the RESP client. Reply errors from Redis are values ({@link RespError}) until a caller asks
 * for a single reply with `call()`, which turns them into {@link RespReplyError}.
 */

/** The connection could not be opened, or it dropped while commands were pending. */
export class RespConnectionError extends Error {
  override name = "RespConnectionError";
}

/** The server sent bytes that are not valid RESP2 (or a reply nobody asked for). */
export class RespProtocolError extends Error {
  override name = "RespProtocolError";
}

/** Redis answered a `call()` with an error reply. */
export class RespReplyError extends Error {
  override name = "RespReplyError";
}
