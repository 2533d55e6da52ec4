/**
 * Runtimes older than explicit resource management (and fresh vm realms such as vitest's vmThreads pool)
 * lack `Symbol.asyncDispose`; installing the registered symbol that esbuild's, TypeScript's and Oxc's
 * `await using` helpers fall back to makes `Lock` disposable there too. Must run before any class with a
 * dispose method is defined; a function, not a side-effect import, so `sideEffects: false` bundlers keep it.
 */
export function ensureAsyncDisposeSymbol(): void {
  try {
    const symbols = Symbol as { asyncDispose?: symbol };
    symbols.asyncDispose ??= Symbol.for("Symbol.asyncDispose");
  } catch {
    // A frozen realm without the symbol cannot `await using` anyway; importing must not throw.
  }
}
