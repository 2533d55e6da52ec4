/**
 * A fresh random lock token. Uses Web Crypto, which every supported runtime has
 * (Node 19+, Bun, Deno, workerd, browsers in secure contexts), so no Node built-in is imported.
 */
export function newToken(): string {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof webCrypto?.randomUUID !== "function") {
    throw new TypeError(
      "Web Crypto `crypto.randomUUID()` is not available in this runtime: pass your own `uuid` to `acquire({ uuid })`, or run where `globalThis.crypto` exists (Node 19+, Bun, Deno, edge runtimes, browsers on https or localhost)",
    );
  }
  return webCrypto.randomUUID();
}
