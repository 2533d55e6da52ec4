import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashSlot } from "../../src/hash-slot";
import { companionKey, eventChannel } from "../../src/keys";

// Every suffix the library uses; none is the end of another, which keeps the names distinct.
const SUFFIXES = [
  ":receipt",
  ":grant",
  ":fence",
  ":queue",
  ":queue-deadlines",
  ":queue-places",
  ":receipts",
  ":permit:1",
  ":permit:12",
  ":calls",
];

const IDS = [
  "plain",
  "unique-lock-id",
  "jobs",
  "{jobs}",
  "{jobs}:fence",
  "{tagged}rest",
  "report:{2026}",
  "open{only",
  "close}only",
  "{}empty-tag",
  "{}a}",
  "a}b{c",
  "a}1",
  "a}2",
  "%7d",
  "}",
  "ünïcödé-🔒",
  "x".repeat(300),
  // 0.2 accepted an empty id: the key "" (slot 0) needs a computed tag, since "{}" is no tag.
  "",
];

describe("companionKey", () => {
  it.each(IDS)("puts the companions of %j in its slot", (id) => {
    for (const suffix of SUFFIXES) {
      const companion = companionKey(id, suffix);
      expect(hashSlot(companion), suffix).toBe(hashSlot(id));
      expect(companion).not.toBe(id);
    }
  });

  it("gives distinct ids distinct companions", () => {
    const names = IDS.flatMap((id) => SUFFIXES.map((suffix) => companionKey(id, suffix)));
    expect(new Set(names).size).toBe(names.length);
    // An id spelled like a companion ("{jobs}:fence") is that key: the documented reserved names.
    expect(names).toContain("{jobs}:fence");
  });

  it('keeps the names of 0.3 for ids without a tag, and tells "jobs" from "{jobs}"', () => {
    expect(companionKey("jobs", ":fence")).toBe("{jobs}:fence");
    expect(companionKey("{jobs}", ":fence")).toBe("{jobs}{jobs}:fence");
  });
});

describe("eventChannel", () => {
  it("is lock-events: and the SHA-1 of the key, as the scripts compute it with redis.sha1hex", async () => {
    const sha1 = createHash("sha1").update("ünï", "utf8").digest("hex");
    expect(await eventChannel("ünï")).toBe(`lock-events:${sha1}`);
  });
});
