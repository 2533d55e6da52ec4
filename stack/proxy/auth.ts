import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Checks the token of a request against the expected one. */
export type TokenVerifier = (req: IncomingMessage, url: URL) => boolean;

/** A random token: 24 bytes from the CSPRNG, base64url-encoded (32 characters). */
export function generateToken(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * Builds a verifier for `Authorization: Bearer <token>`, or the `?_token=<token>` query parameter when the
 * header is absent.
 *
 * Tokens are compared as SHA-256 digests with `timingSafeEqual`: equal-length inputs, so the comparison time
 * reveals neither the token's length nor how many leading characters matched.
 */
export function createTokenVerifier(expected: string): TokenVerifier {
  const expectedDigest = digest(expected);
  return (req, url) => {
    const presented = bearerToken(req.headers.authorization) ?? url.searchParams.get("_token");
    return presented !== null && presented !== "" && timingSafeEqual(digest(presented), expectedDigest);
  };
}

/**
 * The token of `Bearer <token>` (scheme in any case, spaces after it, trailing whitespace ignored), or
 * undefined. Split by hand: the single regex `/^Bearer +(\S*)\s*$/i` backtracks quadratically on a header
 * of spaces, a fifth of a second of blocked event loop for 16 KB.
 */
function bearerToken(header: string | undefined): string | undefined {
  const scheme = header === undefined ? null : /^Bearer +/i.exec(header);
  if (header === undefined || scheme === null) {
    return undefined;
  }
  const token = header.slice(scheme[0].length).trimEnd();
  return /\s/.test(token) ? undefined : token;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
