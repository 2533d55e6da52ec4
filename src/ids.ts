// The random identifiers the library makes: lock tokens, and ids for single release/extend calls.
// Web Crypto only, which every supported runtime has, so no Node built-in is imported.

type WebCrypto = { randomUUID?: () => string; getRandomValues?: (array: Uint8Array) => Uint8Array };

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
 */
export function newCallId(): string {
  const bytes = new Uint8Array(10);
  // Call ids need to be distinct, not secret: without Web Crypto, Math.random will do.
  const crypto = webCrypto();
  if (typeof crypto?.getRandomValues === "function") crypto.getRandomValues(bytes);
  else for (let index = 0; index < bytes.length; index++) bytes[index] = Math.floor(Math.random() * 256);
  let id = "";
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}
