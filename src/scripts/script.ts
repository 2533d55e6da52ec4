import { lazySha1 } from "../digest";

/**
 * Makes Upstash lock only the keys a script gets in KEYS, not the whole database, while it runs; every key a
 * script touches must then be in KEYS, as all ours are. Plain Redis rejects it, so only Upstash gets it.
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
 * Defines a script; each SHA-1 is computed on first use, then kept. Pure: bundlers drop unused scripts (call
 * sites say `@__PURE__` too: esbuild honours this function's annotation only within one file).
 */
/* @__NO_SIDE_EFFECTS__ */
export function defineScript(name: string, ...parts: string[]): LuaScript {
  const source = parts.join(""); // joined here: a call free of side effects is dropped when unused
  const keyLocked = `${KEY_LOCKING_SHEBANG}${source}`;
  return {
    name,
    source,
    sha1: lazySha1(source),
    keyLocked: { source: keyLocked, sha1: lazySha1(keyLocked) },
  };
}
