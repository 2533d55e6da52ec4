import { describeValue } from "../describe-value";
import type { ScriptReply } from "./types";

const INTEGER_TEXT = /^-?\d+$/;
let decoder: TextDecoder | undefined;

// Created on first use, so importing the package never depends on TextDecoder being present.
function utf8(bytes: ArrayBufferView): string {
  decoder ??= new TextDecoder();
  return decoder.decode(bytes);
}

/** The integer `value` stands for, or undefined: a number, a bigint, or decimal text or bytes. */
function integerOf(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  const text = typeof value === "string" ? value : ArrayBuffer.isView(value) ? utf8(value) : undefined;
  return text !== undefined && INTEGER_TEXT.test(text) ? Number(text) : undefined;
}

/**
 * Turns what a client handed back for a script reply into numbers, lists and null. A Redis
 * integer arrives as a number (@upstash/redis, ioredis, node-redis), a string (ioredis with
 * `stringNumbers`, node-redis with a `typeMapping` to String), a bigint, or a buffer; nil as null
 * or undefined. Anything else means the client was set up in a way the lock cannot read.
 * @throws {TypeError} on a value that is not an integer, nil, or a list of those.
 */
export function normalizeReply(value: unknown): ScriptReply {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(normalizeReply);
  const integer = integerOf(value);
  if (integer !== undefined) return integer;
  throw new TypeError(
    `Expected a script reply of integers, lists of integers or nil, got ${describeValue(value)}`,
  );
}

/** Reads an integer from a script reply; anything else reads as NaN. */
export function replyInteger(value: unknown): number {
  return integerOf(value) ?? Number.NaN;
}

/** Reads a script reply that is a list of integers; a single value reads as a list of one. */
export function replyIntegers(value: unknown): number[] {
  return Array.isArray(value) ? value.map(replyInteger) : [replyInteger(value)];
}
