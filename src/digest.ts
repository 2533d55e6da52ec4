let encoder: TextEncoder | undefined;

/**
 * Hex SHA-1 of `text`'s UTF-8 bytes, as `redis.sha1hex` and EVALSHA compute it, by Web Crypto (in every
 * supported runtime; browsers: secure contexts). Undefined without it: scripts go in full, waits poll.
 */
export async function sha1Hex(text: string): Promise<string | undefined> {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!subtle) return undefined;
  encoder ??= new TextEncoder(); // created on first use: importing never depends on TextEncoder
  const bytes = new Uint8Array(await subtle.digest("SHA-1", encoder.encode(text)));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** `sha1Hex(text)`, computed once, on first use. */
/* @__NO_SIDE_EFFECTS__ */
export function lazySha1(text: string): () => Promise<string | undefined> {
  let digest: Promise<string | undefined> | undefined;
  return () => {
    digest ??= sha1Hex(text);
    return digest;
  };
}
