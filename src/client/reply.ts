/**
 * Reads an integer from a script reply. Clients differ in what they hand back: numbers
 * (@upstash/redis, ioredis), strings, bigints or byte buffers.
 */
export function replyInteger(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") return Number(value);
  if (value instanceof Uint8Array) return Number(new TextDecoder().decode(value));
  return Number.NaN;
}

/** Reads a script reply that is a list of integers; a single value reads as a list of one. */
export function replyIntegers(value: unknown): number[] {
  return Array.isArray(value) ? value.map(replyInteger) : [replyInteger(value)];
}
