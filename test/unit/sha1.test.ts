import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha1Hex } from "../../src/sha1";

const reference = (text: string) => createHash("sha1").update(text, "utf8").digest("hex");

describe("sha1Hex", () => {
  it("matches the FIPS 180-4 examples", () => {
    expect(sha1Hex("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
    expect(sha1Hex("")).toBe("da39a3ee5e6b4b0d3255bfef95601890afd80709");
    expect(sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
    );
  });

  it("matches node:crypto around every padding boundary, for multi-byte UTF-8 and long inputs", () => {
    const lengths = [1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_000];
    for (const length of lengths) {
      const ascii = "x".repeat(length);
      expect(sha1Hex(ascii), `length ${length}`).toBe(reference(ascii));
    }
    for (const text of ["é", "lock:ünïcödé", "🔒 emoji id", "{tag}:queue", "日本語のキー".repeat(20)]) {
      expect(sha1Hex(text), text).toBe(reference(text));
    }
    for (let i = 0; i < 200; i++) {
      const token = crypto.randomUUID();
      expect(sha1Hex(token)).toBe(reference(token));
    }
  });
});
