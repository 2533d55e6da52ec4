/**
 * Values produced by the RESP2 parser.
 *
 * Bulk strings stay `Buffer`s (binary-safe); status replies, integers and errors get their own classes so a
 * consumer can tell `+OK` from `$2\r\nOK`, keep integers exact beyond 2^53, and carry errors as values at any
 * nesting depth (an EXEC reply or a Lua table can hold errors next to ordinary values).
 */
export type RespReply = Buffer | RespStatus | RespInteger | RespError | null | RespReply[];

/** A simple string reply (`+OK`, `+PONG`, `+QUEUED`). */
export class RespStatus {
  /** @param text The status text, decoded as UTF-8. */
  constructor(readonly text: string) {}
}

/** An integer reply, kept as its exact decimal digits so values beyond `Number.MAX_SAFE_INTEGER` survive. */
export class RespInteger {
  /** @param digits The decimal digits as Redis sent them, with an optional leading `-`. */
  constructor(readonly digits: string) {}

  /** The exact value. */
  toBigInt(): bigint {
    return BigInt(this.digits);
  }

  /** The value as a JS number (lossy beyond 2^53). */
  toNumber(): number {
    return Number(this.digits);
  }
}

/** An error reply (`-ERR ...`), as a value: parsing an error never throws. */
export class RespError {
  /** @param message The full error line, including its prefix (`ERR`, `WRONGTYPE`, `NOSCRIPT`...). */
  constructor(readonly message: string) {}

  /** The first word of the message, e.g. `WRONGTYPE`. */
  get code(): string {
    const space = this.message.indexOf(" ");
    return space === -1 ? this.message : this.message.slice(0, space);
  }
}
