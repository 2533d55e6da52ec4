import { lazySha1 } from "../digest";

/**
 * The first line that tells Upstash to lock only the keys a script receives in KEYS, instead of
 * the whole database, while it runs. Under it every key a script touches must be in KEYS, which
 * every script of the library respects. Plain Redis rejects the flag, so it is sent only where the
 * server is Upstash.
 */
export const KEY_LOCKING_SHEBANG = "#!lua flags=allow-key-locking\n";

/** One text of a script, as EVAL takes it, and its SHA-1 for EVALSHA. */
export interface ScriptText {
  readonly source: string;
  /** Lowercase hex SHA-1 of `source`, computed on first use (undefined without Web Crypto). */
  sha1(): Promise<string | undefined>;
}

/** A Lua script in its two forms: plain, for any Redis, and behind the key-locking shebang, for Upstash. */
export interface LuaScript extends ScriptText {
  /** What the script does, for messages. */
  readonly name: string;
  readonly keyLocked: ScriptText;
}

/**
 * Defines a script once; each SHA-1 is computed the first time it is asked for, then kept. Marked
 * free of side effects, so a bundler drops the scripts of what a user does not import.
 */
/* @__NO_SIDE_EFFECTS__ */
export function defineScript(name: string, ...parts: string[]): LuaScript {
  // Joined here, not at the call: the call must be free of side effects to be dropped when unused.
  const source = parts.join("");
  const keyLocked = `${KEY_LOCKING_SHEBANG}${source}`;
  return {
    name,
    source,
    sha1: lazySha1(source),
    keyLocked: { source: keyLocked, sha1: lazySha1(keyLocked) },
  };
}
