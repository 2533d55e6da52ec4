import { createHash, randomUUID } from "node:crypto";

/** SHA-1 of a script's UTF-8 text in lowercase hex, computed as @upstash/redis and Redis compute it. */
export function sha1Hex(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

/**
 * A script no earlier test or run has loaded, so its first EVALSHA meets NOSCRIPT: `#!lua flags=<flags>` on
 * line 1, `body` from line 2, then a comment that makes the text unique.
 */
export function flaggedScript(body: string, flags = "allow-key-locking"): string {
  return `#!lua flags=${flags}\n${body}\n-- ${randomUUID()}`;
}
