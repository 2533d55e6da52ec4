/**
 * The first line that tells Upstash to lock only the keys a script receives in KEYS, instead of
 * the whole database, while it runs. Under it every key a script touches must be in KEYS, which
 * every script of the library respects. Plain Redis rejects the flag, so it is sent only where the
 * server is Upstash (see `client/server.ts`).
 */
export const KEY_LOCKING_SHEBANG = "#!lua flags=allow-key-locking\n";

/** One text of a script and its SHA-1, as EVAL and EVALSHA take them. */
export interface ScriptText {
  /** The exact text sent with EVAL. */
  readonly source: string;
  /** Lowercase hex SHA-1 of `source`, as EVALSHA and SCRIPT LOAD use it. */
  readonly sha1: string;
}

/**
 * A Lua script in its two forms, each with its SHA-1 written as a literal so no hashing runs at
 * startup (a test checks both): plain, for any Redis, and with {@link KEY_LOCKING_SHEBANG}, for Upstash.
 */
export interface LuaScript extends ScriptText {
  /** What the script does, for error messages. */
  readonly name: string;
  /** The same script behind the key-locking shebang; its SHA-1 differs, as EVALSHA must see it. */
  readonly keyLocked: ScriptText;
}

/** Builds both forms of a script from its plain text and the two SHA-1 literals. */
export function defineScript(definition: {
  name: string;
  source: string;
  sha1: string;
  keyLockedSha1: string;
}): LuaScript {
  const { name, source, sha1, keyLockedSha1 } = definition;
  return {
    name,
    source,
    sha1,
    keyLocked: { source: `${KEY_LOCKING_SHEBANG}${source}`, sha1: keyLockedSha1 },
  };
}
