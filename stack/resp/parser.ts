import { RespProtocolError } from "./errors";
import { RespError, RespInteger, type RespReply, RespStatus } from "./reply";

const CR = 0x0d;
const EMPTY = Buffer.alloc(0);
const INTEGER_DIGITS = /^-?\d+$/;

/** An array whose elements are still arriving. */
interface Frame {
  readonly items: RespReply[];
  remaining: number;
}

/**
 * A streaming RESP2 parser: feed it socket chunks in order, get back every top-level reply they complete.
 *
 * Elements are consumed whole, so the only state kept between chunks is the stack of open arrays and the bytes
 * of the element still incomplete. When the size of that element is known (a bulk string), chunks are only
 * queued until enough bytes are there, so a large value costs one copy instead of one per chunk.
 */
export class RespParser {
  #buffer: Buffer = EMPTY;
  #offset = 0;
  #queued: Buffer[] = [];
  #queuedBytes = 0;
  /** Bytes needed from `#offset` before parsing can progress; 0 when unknown. */
  #wanted = 0;
  readonly #stack: Frame[] = [];

  /**
   * Parses a chunk.
   *
   * @returns the top-level replies completed by this chunk, in order.
   * @throws RespProtocolError on bytes that are not RESP2; the parser is unusable afterwards.
   */
  feed(chunk: Buffer): RespReply[] {
    const available = this.#buffer.length - this.#offset + this.#queuedBytes + chunk.length;
    if (available < this.#wanted) {
      this.#queued.push(chunk);
      this.#queuedBytes += chunk.length;
      return [];
    }
    this.#buffer = this.#joinWith(chunk);
    this.#offset = 0;
    this.#wanted = 0;
    const replies: RespReply[] = [];
    while (this.#offset < this.#buffer.length) {
      const element = this.#readElement();
      if (element === INCOMPLETE) {
        break;
      }
      if (element !== OPENED_ARRAY) {
        this.#deliver(element, replies);
      }
    }
    if (this.#offset === this.#buffer.length) {
      this.#buffer = EMPTY;
      this.#offset = 0;
    }
    return replies;
  }

  /** Whether a reply has started arriving but is not complete yet. */
  get inProgress(): boolean {
    return this.#stack.length > 0 || this.#offset < this.#buffer.length || this.#queuedBytes > 0;
  }

  #joinWith(chunk: Buffer): Buffer {
    const rest = this.#buffer.subarray(this.#offset);
    if (rest.length === 0 && this.#queued.length === 0) {
      return chunk;
    }
    const joined = Buffer.concat([rest, ...this.#queued, chunk]);
    this.#queued = [];
    this.#queuedBytes = 0;
    return joined;
  }

  /** Adds a finished element to the innermost open array, closing arrays it completes. */
  #deliver(element: RespReply, replies: RespReply[]): void {
    let value = element;
    for (;;) {
      const frame = this.#stack.at(-1);
      if (frame === undefined) {
        replies.push(value);
        return;
      }
      frame.items.push(value);
      frame.remaining -= 1;
      if (frame.remaining > 0) {
        return;
      }
      this.#stack.pop();
      value = frame.items;
    }
  }

  #readElement(): RespReply | typeof INCOMPLETE | typeof OPENED_ARRAY {
    const buffer = this.#buffer;
    const start = this.#offset;
    const lineEnd = buffer.indexOf(CR, start + 1);
    if (lineEnd === -1 || lineEnd + 1 >= buffer.length) {
      return INCOMPLETE;
    }
    if (buffer[lineEnd + 1] !== 0x0a) {
      throw new RespProtocolError("RESP line not terminated by CRLF");
    }
    const next = lineEnd + 2;
    switch (buffer[start]) {
      case 0x2b /* + */:
        this.#offset = next;
        return new RespStatus(buffer.toString("utf8", start + 1, lineEnd));
      case 0x2d /* - */:
        this.#offset = next;
        return new RespError(buffer.toString("utf8", start + 1, lineEnd));
      case 0x3a /* : */:
        this.#offset = next;
        return parseInteger(buffer.toString("latin1", start + 1, lineEnd));
      case 0x24 /* $ */:
        return this.#readBulk(parseLength(buffer, start + 1, lineEnd), next);
      case 0x2a /* * */:
        return this.#openArray(parseLength(buffer, start + 1, lineEnd), next);
      default:
        throw new RespProtocolError(`Unexpected RESP type byte 0x${(buffer[start] ?? 0).toString(16)}`);
    }
  }

  #readBulk(length: number, bodyStart: number): RespReply | typeof INCOMPLETE {
    if (length === -1) {
      this.#offset = bodyStart;
      return null;
    }
    const end = bodyStart + length;
    if (this.#buffer.length < end + 2) {
      this.#wanted = end + 2 - this.#offset;
      return INCOMPLETE;
    }
    if (this.#buffer[end] !== CR || this.#buffer[end + 1] !== 0x0a) {
      throw new RespProtocolError("Bulk string not terminated by CRLF");
    }
    this.#offset = end + 2;
    // A copy, so a small reply does not pin a large shared receive buffer in memory.
    return Buffer.from(this.#buffer.subarray(bodyStart, end));
  }

  #openArray(length: number, next: number): RespReply | typeof OPENED_ARRAY {
    this.#offset = next;
    if (length === -1) {
      return null;
    }
    if (length === 0) {
      return [];
    }
    this.#stack.push({ items: [], remaining: length });
    return OPENED_ARRAY;
  }
}

const INCOMPLETE = Symbol("incomplete");
const OPENED_ARRAY = Symbol("opened array");

function parseInteger(digits: string): RespInteger {
  if (!INTEGER_DIGITS.test(digits)) {
    throw new RespProtocolError(`Invalid RESP integer ${JSON.stringify(digits)}`);
  }
  return new RespInteger(digits);
}

function parseLength(buffer: Buffer, start: number, end: number): number {
  const text = buffer.toString("latin1", start, end);
  const length = Number(text);
  if (!INTEGER_DIGITS.test(text) || length < -1 || !Number.isSafeInteger(length)) {
    throw new RespProtocolError(`Invalid RESP length ${JSON.stringify(text)}`);
  }
  return length;
}
