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

function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S*)\s*$/i.exec(header);
  return match?.[1];
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
