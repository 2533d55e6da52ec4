/** A Lua script with its SHA-1, written as a literal so no hashing runs at startup (a test checks it). */
export interface LuaScript {
  /** What the script does, for error messages. */
  readonly name: string;
  /** The exact source sent with EVAL; its SHA-1 is `sha1`. */
  readonly source: string;
  /** Lowercase hex SHA-1 of `source`, as EVALSHA and SCRIPT LOAD use it. */
  readonly sha1: string;
}
