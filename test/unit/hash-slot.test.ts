import { describe, expect, it } from "vitest";
import { crc16, hashSlot, hashTag, sameSlotKey } from "../../src/hash-slot";

describe("hashSlot", () => {
  it("matches the CRC16 check value and the slots Redis documents", () => {
    // The XMODEM check value, and CLUSTER KEYSLOT answers from a real Redis 7.
    expect(crc16(new TextEncoder().encode("123456789"))).toBe(0x31c3);
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

describe("sameSlotKey", () => {
  const ids = [
    "plain",
    "unique-lock-id",
    "{tagged}rest",
    "open{only",
    "close}only",
    "{}empty-tag",
    "{}a}",
    "a}b{c",
    "ünïcödé-🔒",
    "x".repeat(300),
    // 0.2 accepted an empty id: the key "" (slot 0) needs a searched tag, since "{}" is no tag.
    "",
  ];

  it.each(ids)("puts the derived key of %j in the same slot", (id) => {
    const derived = sameSlotKey(id, ":receipt:abc");
    expect(derived).not.toBe(id);
    expect(derived.length).toBeGreaterThan(0);
    expect(hashSlot(derived)).toBe(hashSlot(id));
  });

  it("gives distinct keys for distinct ids that share a slot", () => {
    expect(sameSlotKey("a}1", ":s")).not.toBe(sameSlotKey("a}2", ":s"));
    expect(sameSlotKey("{t}a", ":s")).not.toBe(sameSlotKey("{t}b", ":s"));
  });
});
