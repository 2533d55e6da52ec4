import { describe, expect, it } from "vitest";
import { normalizeReply, replyIntegers, UnreadableReplyError } from "../../../src/redis/reply";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("normalizeReply", () => {
  it.each([
    ["a number", 1, 1],
    ["a negative number", -2, -2],
    ["a bigint", 9_007_199_254_740_991n, 9_007_199_254_740_991],
    ["integer text", "42", 42],
    ["negative integer text", "-2", -2],
    ["a Buffer", Buffer.from("7"), 7],
    ["a Uint8Array", bytes("-1"), -1],
    ["null", null, null],
    ["undefined", undefined, null],
  ])("reads %s", (_name, value, expected) => {
    expect(normalizeReply(value)).toBe(expected);
  });

  it("reads lists, nested lists and nil inside them", () => {
    expect(normalizeReply([1n, "2", Buffer.from("3"), null, [4, ["5"]], []])).toEqual([
      1,
      2,
      3,
      null,
      [4, [5]],
      [],
    ]);
  });

  it.each([
    ["a status text", "OK"],
    ["empty text", ""],
    ["decimal text", "1.5"],
    ["text with spaces", " 1"],
    ["non-integer bytes", Buffer.from("abc")],
    ["a boolean", true],
    ["an object", { value: 1 }],
    ["a list holding text", [1, "x"]],
  ])("refuses %s with a TypeError", (_name, value) => {
    expect(() => normalizeReply(value)).toThrow(TypeError);
    expect(() => normalizeReply(value)).toThrow(/^Expected a script reply of integers/);
  });
});

describe("replyIntegers", () => {
  it("reads a normalised reply as integers, a single value as a list of one", () => {
    expect(replyIntegers(normalizeReply([1, 2n, "3", Buffer.from("4")]))).toEqual([1, 2, 3, 4]);
    expect(replyIntegers(1)).toEqual([1]);
  });

  // Review helper-134 (stop 50): such replies read as "held by another owner" (6/6), an outage as contention.
  it.each([
    ["an empty list", []],
    ["nil in a list", [null]],
    ["a nested list", [[1]]],
    ["nil", null],
  ])("refuses %s as unreadable", (_name, value) => {
    expect(() => replyIntegers(value)).toThrow(UnreadableReplyError);
  });

  it.each([
    ["a lone 0", 0],
    ["a flag of 42", 42],
    ["a flag of 7 in a list", [7]],
    ["a 0 with no detail", [0]],
  ])("refuses %s where a flag leads the reply", (_name, value) => {
    expect(replyIntegers(value)).toEqual(Array.isArray(value) ? value : [value]);
    expect(() => replyIntegers(value, true)).toThrow(UnreadableReplyError);
  });

  it("reads every flagged shape the scripts return", () => {
    for (const reply of [[1], [1, 7], [0, 0], [0, -2], [1, 3, 9], [0, -1, 0, 0]]) {
      expect(replyIntegers(reply, true)).toEqual(reply);
    }
  });
});
