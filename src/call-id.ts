const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A short random id for one release or extend call: 10 characters (about 51 bits), enough to tell
 * one lock's calls apart during a receipt's 30 s life, at a fraction of a UUID's bytes on the wire.
 */
export function newCallId(): string {
  const bytes = new Uint8Array(10);
  // Call ids need to be distinct, not secret: without Web Crypto, Math.random will do.
  const webCrypto = (globalThis as { crypto?: { getRandomValues?: (array: Uint8Array) => Uint8Array } })
    .crypto;
  if (typeof webCrypto?.getRandomValues === "function") webCrypto.getRandomValues(bytes);
  else for (let index = 0; index < bytes.length; index++) bytes[index] = Math.floor(Math.random() * 256);
  let id = "";
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}
