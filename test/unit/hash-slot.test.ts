import { describe, expect, it } from "vitest";
import { crc16, hashSlot, hashTag, tagForSlot } from "../../src/hash-slot";

describe("hashSlot", () => {
  it("matches the CRC16 check value and the slots Redis documents", () => {
    // The XMODEM check value, and CLUSTER KEYSLOT answers from a real Redis 7.
    expect(crc16("123456789")).toBe(0x31c3);
    expect(hashSlot("foo")).toBe(12182);
    expect(hashSlot("bar")).toBe(5061);
    expect(hashSlot("somekey")).toBe(11058);
  });

  it("hashes only the hash tag when one exists", () => {
    expect(hashTag("{user1000}.following")).toBe("user1000");
    expect(hashSlot("{user1000}.following")).toBe(hashSlot("user1000"));
    expect(hashTag("foo{}{bar}")).toBeUndefined();
    expect(hashTag("foo{{bar}}zap")).toBe("{bar");
    expect(hashTag("foo{bar}{zap}")).toBe("bar");
    expect(hashTag("no-braces")).toBeUndefined();
    expect(hashTag("open{only")).toBeUndefined();
  });
});

describe("tagForSlot", () => {
  it.each([0, 1, 866, 16_383])("finds a brace-free tag of slot %i", (slot) => {
    const tag = tagForSlot(slot);
    expect(tag).not.toMatch(/[{}]/);
    expect(hashSlot(tag)).toBe(slot);
  });
});
