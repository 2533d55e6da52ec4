/**
 * Renders a value for an error message: strings quoted, numbers as written, other types named.
 * Never prints object contents, which could hold secrets such as a client's token.
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  return `an object (${typeof value})`;
}
