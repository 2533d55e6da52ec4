// The random identifiers the library makes: lock tokens, and ids for single release/extend calls.
// Web Crypto only, which every supported runtime has, so no Node built-in is imported.

type WebCrypto = { randomUUID?: () => string };

function webCrypto(): WebCrypto | undefined {
  return (globalThis as { crypto?: WebCrypto }).crypto;
}

/**
 * A fresh random lock token (Node 19+, Bun, Deno, workerd, browsers in secure contexts).
 * @throws {TypeError} where `crypto.randomUUID()` is missing, saying how to pass a token instead.
 */
export function newToken(): string {
  const crypto = webCrypto();
  if (typeof crypto?.randomUUID !== "function") {
    throw new TypeError(
      "Web Crypto `crypto.randomUUID()` is not available in this runtime: pass your own `uuid` to `acquire({ uuid })`, or run where `globalThis.crypto` exists (Node 19+, Bun, Deno, edge runtimes, browsers on https or localhost)",
    );
  }
  return crypto.randomUUID();
}

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A short random id for one release or extend call: 10 characters (about 51 bits), enough to tell
 * one lock's calls apart during a receipt's 30 s life, at a fraction of a UUID's bytes on the wire.
 * The ids need to be distinct, not secret, so they come from `Math.random`, which costs nothing
 * next to Web Crypto's `getRandomValues` (a call into the system's random source on every release).
 */
export function newCallId(): string {
  let id = "";
  for (let index = 0; index < 10; index++) id += ALPHABET[Math.floor(Math.random() * ALPHABET.length)];
  return id;
}
