import { describeValue } from "../validate";

/** A script reply as the library reads it; the library's scripts return nothing else. */
export type ScriptReply = number | null | ScriptReply[];

const INTEGER_TEXT = /^-?\d+$/;
let decoder: TextDecoder | undefined;

/** A reply the lock cannot read: Redis answered (the script ran), the client handed back another shape. */
export class UnreadableReplyError extends TypeError {
  override name = "UnreadableReplyError";
}

/**
 * A whole reply of nil, which no script of the library's returns: the client gave the request up itself and
 * made one up (@upstash/redis with an aborted `signal` answers so, whether it sent the request or not). Read
 * as a client's own timeout: Redis may not have been asked, or the request may have run.
 */
export class GivenUpError extends Error {
  override name = "GivenUpError";
}

/** {@link normalizeReply} of a whole reply, which is never nil (see {@link GivenUpError}). */
export function readReply(value: unknown): ScriptReply {
  if (value == null)
    throw new GivenUpError(
      "the client answered nil itself (a request it gave up on, e.g. an aborted `signal`)",
    );
  return normalizeReply(value);
}

/**
 * A client's script reply as numbers, lists and null. Integers arrive as numbers, strings (ioredis
 * `stringNumbers`, node-redis `typeMapping` to String), bigints or buffers; nil as null or undefined.
 * @throws {UnreadableReplyError} on anything else: the client was set up in a way the lock cannot read.
 */
export function normalizeReply(value: unknown): ScriptReply {
  if (value == null) return null;
  if (Array.isArray(value)) return value.map(normalizeReply);
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  let text = value;
  if (ArrayBuffer.isView(value)) {
    decoder ??= new TextDecoder(); // created on first use: importing never depends on TextDecoder
    text = decoder.decode(value);
  }
  if (typeof text === "string" && INTEGER_TEXT.test(text)) return Number(text);
  throw new UnreadableReplyError(`Expected a script reply of integers or nil, got ${describeValue(value)}`);
}

/**
 * A script reply as a list of integers (a single value as a list of one). `flagged`: it starts with a flag
 * (1 taken or held, 0 not) that a 0 follows with a detail, as every take and observation of the library's
 * does: a reply of integers that no script returns must not read as "held by another" (or "not held").
 * @throws {UnreadableReplyError} on an empty list, a nested list or nil in it, or a flag it lacks.
 */
export function replyIntegers(value: ScriptReply, flagged = false): number[] {
  const values = Array.isArray(value) ? value : [value];
  const [flag] = values;
  const unflagged = flagged && flag !== 1 && (flag !== 0 || values.length < 2);
  if (values.length === 0 || unflagged || values.some((item) => typeof item !== "number")) {
    throw new UnreadableReplyError(`Expected a script reply of integers, got ${JSON.stringify(value)}`);
  }
  return values as number[];
}
