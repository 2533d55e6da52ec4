/**
 * Pins the Lua helpers of src/scripts/tries.ts, run directly on the suite's Redis (helper text + a
 * one-line body, no keys): `confirmed` (insert after the taker; an id listed live or `!` changes
 * nothing; at 64 entries: taker, newest 40 live, newest abandoned up to 64, `*` only when a live one is
 * dropped or was listed), `buried`, `abandon` (exact ids, Lua pattern characters included), `owns`,
 * and RECENT's `recent` (hits and misses kept apart) and `answered` (1, 0 or nil).
 */
import { describe, expect, it } from "vitest";
import { RECENT, TRIES } from "../../src/scripts/tries";
import { newRedis } from "../support/redis";

const redis = newRedis({ automaticDeserialization: false });

function run(helpers: string, body: string, ...args: (string | number)[]): Promise<unknown> {
  return redis.eval(`${helpers}\n${body}`, [], args.map(String));
}

/** `n` ids `<prefix>1` ... `<prefix>n`, newest first as a list reads, each followed by `mark`. */
function ids(prefix: string, n: number, mark = ""): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}${mark}`);
}

const list = (...parts: (string | string[])[]): string => parts.flat().join(" ");

describe("confirmed(list, id)", () => {
  const confirm = (l: string, id: string) => run(TRIES, "return confirmed(ARGV[1], ARGV[2])", l, id);
  const full = list("t", ids("L", 50), "n!", ids("A", 12, "!"));

  it.each([
    ["goes right after the taker", "t a b", "n", "t n a b"],
    ["matches ids exactly, not as prefixes", "t na n!x", "n", "t n na n!x"],
    ["leaves a listed live id as it was", "t a b", "a", "t a b"],
    ["leaves a listed abandoned id as it was", "t a! b", "a", "t a! b"],
    ["keeps all 63 entries, even over 40 live", list("t", ids("L", 62)), "n", list("t", "n", ids("L", 62))],
    ["leaves a full list naming the id unchanged", full, "n", full],
  ])("below 64 entries, or listed: %s", async (_name, before, id, after) => {
    expect(await confirm(before, id)).toBe(after);
  });

  it.each([
    [
      "a few live: drops the oldest abandoned one, adds no *",
      list("t", ids("L", 10), ids("A", 53, "!")),
      list("t", "n", ids("L", 10), ids("A", 52, "!")),
    ],
    [
      "exactly 40 live: keeps them all, adds no *",
      list("t", ids("L", 40), ids("A", 23, "!")),
      list("t", "n", ids("L", 40), ids("A", 22, "!")),
    ],
    [
      "over 40 live: keeps the newest 40, the abandoned ones, and adds *",
      list("t", ids("A", 20, "!"), ids("L", 43)),
      list("t", "n", ids("A", 20, "!"), ids("L", 40), "*"),
    ],
    ["all live: newest 40 and *", list("t", ids("L", 63)), list("t", "n", ids("L", 40), "*")],
    [
      "a listed * stays (moved last), one abandoned one less",
      list("t", ids("L", 40), "*", ids("A", 22, "!")),
      list("t", "n", ids("L", 40), ids("A", 21, "!"), "*"),
    ],
    [
      "abandoned ones never push out live ones",
      list("t", ids("A", 40, "!"), ids("L", 23)),
      list("t", "n", ids("A", 39, "!"), ids("L", 23)),
    ],
  ])("at 64 entries: %s", async (_name, before, after) => {
    expect(before.split(" ")).toHaveLength(64);
    const result = await confirm(before, "n");
    expect(result).toBe(after);
    expect(String(result).split(" ").length).toBeLessThanOrEqual(64);
  });
});

describe("buried(list, most, first)", () => {
  it.each([
    ["first, then the newest `most` marked", "a b! * c d", 2, "n a! b!"],
    ["all when fewer than `most`, * dropped", "a b! * c d", 10, "n a! b! c! d!"],
    ["* does not count toward `most`", "* a b", 1, "n a!"],
  ])("%s", async (_name, l, most, after) => {
    expect(await run(TRIES, "return buried(ARGV[1], tonumber(ARGV[2]), ARGV[3])", l, most, "n")).toBe(after);
  });

  it("a nil list gives `first` alone", async () => {
    expect(await run(TRIES, "return buried(nil, 5, ARGV[1])", "n!")).toBe("n!");
  });
});

describe("abandon(list, id)", () => {
  it.each([
    ["marks the id, a live one left", "t a", "a", "t a!", 1],
    ["the last live one", "t! a", "a", "t! a!", 0],
    ["`-` matches no other id", "t 1 a-1 a-12", "a-1", "t 1 a-1! a-12", 1],
    ["`.` matches no other id", "t! axb a.b", "a.b", "t! axb a.b!", 1],
    ["no undo frees *", "t! a *", "a", "t! a! *", 1],
    ["an id marked already stays as it was", "t! a!", "a", "t! a!", 0],
  ])("%s", async (_name, before, id, after, left) => {
    const body = "local marked, left = abandon(ARGV[1], ARGV[2])\nreturn {marked, left and 1 or 0}";
    expect(await run(TRIES, body, before, id)).toEqual([after, left]);
  });
});

describe("owns(list, name)", () => {
  const owns = (l: string, name: string) => run(TRIES, "return owns(ARGV[1], ARGV[2]) and 1 or 0", l, name);

  it.each([
    ["an empty name", "x", "", 1],
    ["name listed unabandoned", "x a y!", "a", 1],
    ["another live id, name not listed", "x", "a", 0],
    ["another live id, name only as a prefix", "ab", "a", 0],
    ["another live id, name abandoned", "x a!", "a", 0],
    ["only * and abandoned ids", "* x! a!", "a", 1],
    ["an empty list", "", "a", 1],
  ])("%s", async (_name, l, name, expected) => {
    expect(await owns(l, name)).toBe(expected);
  });

  it("a nil list", async () => {
    expect(await run(TRIES, "return owns(nil, ARGV[1]) and 1 or 0", "a")).toBe(1);
  });
});

describe("RECENT", () => {
  it.each([
    ["a hit first: `most` hits and `most` misses", "h1 m1! h2 m2! h3 m3!", 2, "n", "n h1 m1! m2!"],
    ["a miss first: `most` hits and `most` misses", "h1 m1! h2 m2! h3 m3!", 2, "n!", "n! h1 m1! h2"],
    ["misses never push out hits", "m1! m2! m3! m4! h1 h2", 3, "n", "n m1! m2! m3! h1 h2"],
  ])("recent: %s", async (_name, l, most, first, after) => {
    const body = "return recent(ARGV[1], tonumber(ARGV[2]), ARGV[3])";
    expect(await run(RECENT, body, l, most, first)).toBe(after);
  });

  it("recent of a nil list gives `first` alone", async () => {
    expect(await run(RECENT, "return recent(nil, 2, ARGV[1])", "n")).toBe("n");
  });

  it.each([
    ["took effect", "a b! c", "a", 1],
    ["found the hold gone", "a b! c", "b", 0],
    ["has not run", "a b! c", "d", null],
    ["has not run (a prefix only)", "ab cd!", "c", null],
  ])("answered: %s", async (_name, l, id, expected) => {
    expect(await run(RECENT, "return answered(ARGV[1], ARGV[2])", l, id)).toBe(expected);
  });

  it("answered on a nil list is nil", async () => {
    expect(await run(RECENT, "return answered(nil, ARGV[1])", "a")).toBeNull();
  });
});
