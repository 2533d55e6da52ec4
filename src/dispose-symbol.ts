/**
 * Runtimes older than the explicit-resource-management proposal (and fresh vm realms such as
 * vitest's vmThreads pool) lack `Symbol.asyncDispose`. Installing the registered symbol that
 * esbuild's, TypeScript's and Oxc's `await using` helpers fall back to makes `Lock` disposable
 * there too. Must run before any class that declares a dispose method is defined. It is a
 * function rather than a side-effect import so bundlers honouring `sideEffects: false` keep it.
 */
export function ensureAsyncDisposeSymbol(): void {
  try {
    const symbols = Symbol as { asyncDispose?: symbol };
    symbols.asyncDispose ??= Symbol.for("Symbol.asyncDispose");
  } catch {
    // A frozen realm that lacks the symbol: `await using` cannot work there anyway, and
    // importing the package must not throw.
  }
}
