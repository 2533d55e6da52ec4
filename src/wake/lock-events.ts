import type { LockEvent } from "./feed-types";

let encoder: TextEncoder | undefined;

function subtleCrypto(): SubtleCrypto | undefined {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  return typeof subtle?.digest === "function" ? subtle : undefined;
}

/** Whether this runtime can compute channel names (Web Crypto's digest; browsers only on https). */
export function canNameEventChannels(): boolean {
  return subtleCrypto() !== undefined;
}

/**
 * The pub/sub channel a lock's acquisitions and releases are announced on:
 * `lock-events:<SHA-1 of the key, hex>`, which the scripts compute with `redis.sha1hex`. Hashing
 * keeps the name safe in a URL path (Upstash's REST subscribe endpoint puts it there) and short,
 * whatever the id. Resolves undefined where Web Crypto's digest is missing; then waiters only poll.
 */
export async function lockEventChannel(key: string): Promise<string | undefined> {
  const subtle = subtleCrypto();
  if (subtle === undefined) return undefined;
  try {
    // Created on first use, so importing the package never depends on TextEncoder being present.
    encoder ??= new TextEncoder();
    const digest = new Uint8Array(await subtle.digest("SHA-1", encoder.encode(key)));
    let hex = "";
    for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
    return `lock-events:${hex}`;
  } catch {
    return undefined;
  }
}

const TURN = /^next:\d+$/;

/** Reads a channel message as a lock event; anything else counts as a release (the safe guess: retry). */
export function lockEventOf(message: unknown): LockEvent {
  if (message === "acquired") return "acquired";
  if (typeof message === "string" && TURN.test(message)) return message as LockEvent;
  return "released";
}
