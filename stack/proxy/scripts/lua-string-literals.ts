/**
 * The string literals of a Lua 5.1 source, in order: `'...'`, `"..."` and long strings `[[...]]`,
 * `[==[...]==]`. Comments are skipped, so an apostrophe in `-- don't` does not open a string.
 *
 * Short strings with escapes are skipped rather than decoded: the proxy only looks for command names in
 * literals, and nobody writes `"g\101t"` for GET (a call to such a name is refused as unchecked).
 */
export function luaStringLiterals(source: string): string[] {
  const literals: string[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index];
    if (char === "-" && source.startsWith("--", index)) {
      const long = longBracketAt(source, index + 2);
      index = long === undefined ? lineEnd(source, index) : long.end;
    } else if (char === "[") {
      const long = longBracketAt(source, index);
      if (long !== undefined) {
        literals.push(long.content);
      }
      index = long === undefined ? index + 1 : long.end;
    } else if (char === '"' || char === "'") {
      const close = shortStringClose(source, index);
      const content = source.slice(index + 1, close);
      if (!content.includes("\\")) {
        literals.push(content);
      }
      index = close + 1;
    } else {
      index += 1;
    }
  }
  return literals;
}

/** A long bracket `[==[ ... ]==]` opening at `start`: its content and the index after it. */
function longBracketAt(source: string, start: number): { content: string; end: number } | undefined {
  const open = /^\[(=*)\[/.exec(source.slice(start, start + 64));
  if (open === null) {
    return undefined;
  }
  const close = `]${open[1]}]`;
  const contentStart = start + open[0].length;
  const closeAt = source.indexOf(close, contentStart);
  if (closeAt === -1) {
    return { content: source.slice(contentStart), end: source.length };
  }
  // Lua drops a line feed that directly follows the opening bracket.
  const content = source.slice(contentStart, closeAt).replace(/^\r?\n/, "");
  return { content, end: closeAt + close.length };
}

/**
 * The index of the quote that closes the short string opened at `start`; for an unterminated string (a
 * syntax error Redis will report), the index of the line feed or the end of the source.
 */
function shortStringClose(source: string, start: number): number {
  const quote = source[start];
  for (let index = start + 1; index < source.length; index += 1) {
    const char = source[index];
    if (char === "\\") {
      index += 1;
    } else if (char === quote || char === "\n") {
      return index;
    }
  }
  return source.length;
}

function lineEnd(source: string, start: number): number {
  const newline = source.indexOf("\n", start);
  return newline === -1 ? source.length : newline;
}
