/** The Upstash-only script flag the proxy emulates; Redis rejects it ("Unexpected flag in script shebang"). */
export const KEY_LOCKING_FLAG = "allow-key-locking";

/** A script that carried {@link KEY_LOCKING_FLAG}, split where the proxy must insert its own code. */
export interface KeyLockingScript {
  /**
   * The shebang line to keep, without its line feed and without the flag (`#!lua flags=no-writes`), or
   * undefined when nothing but the flag was declared, so the line is dropped.
   */
  readonly shebang: string | undefined;
  /** The rest of the script, from the line feed that ended the shebang (included) to the end. */
  readonly body: string;
}

/**
 * Finds {@link KEY_LOCKING_FLAG} in a script's shebang and takes it out, keeping the other flags and options
 * for Redis to validate.
 *
 * The shebang is read as Redis 7 reads it: the first line, up to `\n`, starting with `#!`, split on
 * whitespace, `#!lua` first, then `flags=a,b` options (several may appear). Anything this reading cannot
 * take apart safely (no line feed, another engine, quotes) is left to Redis.
 *
 * @returns undefined when the script does not carry the flag: such scripts are forwarded untouched.
 */
export function splitKeyLockingShebang(script: string): KeyLockingScript | undefined {
  if (!script.startsWith("#!")) {
    return undefined;
  }
  const lineEnd = script.indexOf("\n");
  const line = lineEnd === -1 ? "" : script.slice(0, lineEnd);
  const words = line.trim().split(/\s+/);
  // Redis splits with quote handling; a quoted shebang is not worth emulating, so Redis judges it as sent.
  if (lineEnd === -1 || words[0] !== "#!lua" || /["']/.test(line)) {
    return undefined;
  }
  let flagged = false;
  const kept = words.flatMap((word) => {
    if (!word.startsWith("flags=")) {
      return [word];
    }
    const flags = word.slice("flags=".length).split(",");
    const others = flags.filter((flag) => flag !== KEY_LOCKING_FLAG);
    flagged ||= others.length < flags.length;
    if (others.length === flags.length) {
      return [word];
    }
    return others.length === 0 ? [] : [`flags=${others.join(",")}`];
  });
  if (!flagged) {
    return undefined;
  }
  return { shebang: kept.length === 1 ? undefined : kept.join(" "), body: script.slice(lineEnd) };
}
