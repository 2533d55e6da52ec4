import { afterEach, describe, expect, it, vi } from "vitest";
import { lazySha1, sha1Hex } from "../../src/digest";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("sha1Hex", () => {
  it("is the lowercase hex SHA-1 of the UTF-8 bytes, as redis.sha1hex computes it", async () => {
    expect(await sha1Hex("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
    expect(await sha1Hex("")).toBe("da39a3ee5e6b4b0d3255bfef95601890afd80709");
    // Multi-byte characters hash as their UTF-8 bytes, not as UTF-16 code units.
    for (const text of ["é", "lock:🔒"]) expect(await sha1Hex(text)).toBe(await utf8Sha1(text));
  });

  it("resolves undefined where Web Crypto is missing (scripts are then sent in full)", async () => {
    vi.stubGlobal("crypto", {});
    expect(await sha1Hex("abc")).toBeUndefined();
  });
});

describe("lazySha1", () => {
  it("computes the digest once, on first use", async () => {
    const digest = vi.spyOn(globalThis.crypto.subtle, "digest");
    const sha1 = lazySha1("some script");
    expect(digest).not.toHaveBeenCalled();
    const [first, second] = await Promise.all([sha1(), sha1()]);
    expect(await sha1()).toBe(first);
    expect(second).toBe(first);
    expect(digest).toHaveBeenCalledTimes(1);
    digest.mockRestore();
  });
});

/** The SHA-1 of `text`'s UTF-8 bytes, computed by Node's own crypto: an independent reference. */
async function utf8Sha1(text: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  return createHash("sha1").update(Buffer.from(text, "utf8")).digest("hex");
}
