let encoder: TextEncoder | undefined;

/**
 * The SHA-1 of `text`'s UTF-8 bytes in lowercase hex, as `redis.sha1hex` and EVALSHA compute it,
 * from Web Crypto (every supported runtime has it; a browser only in a secure context). Resolves
 * undefined where it is missing: scripts are then sent in full, and waits poll.
 */
export async function sha1Hex(text: string): Promise<string | undefined> {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!subtle) return undefined;
  // Created on first use, so importing the package never depends on TextEncoder being present.
  encoder ??= new TextEncoder();
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
