/** Renders a value for an error message, never showing object contents: they may hold a client's token. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    // Not shown: the text may be a token (`uuid`), and the fault is where it is.
    const lone = value.search(LONE_SURROGATE);
    return lone === -1 ? JSON.stringify(value) : `a string with a lone surrogate near index ${lone}`;
  }
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What an option must be; each rule names the types it wants and says which values of them are in range. */
const RULES = {
  ms: ["number", "a positive integer (milliseconds)", (v: number) => Number.isSafeInteger(v) && v > 0],
  ms0: ["number", "a non-negative integer (milliseconds)", (v: number) => Number.isSafeInteger(v) && v >= 0],
  // Bounded as timers are: the default maxDelay, ten times it, must stay a safe integer for Redis.
  delay: [
    "number",
    "a non-negative number (milliseconds, at most 2147483647)",
    (v: number) => v >= 0 && v <= 2_147_483_647,
  ],
  permits: ["number", "a positive integer (permits)", (v: number) => Number.isSafeInteger(v) && v > 0],
  fraction: ["number", "a number from 0 to 1", (v: number) => v >= 0 && v <= 1],
  count: ["number", "a number", (v: number) => !Number.isNaN(v)],
  boolean: ["boolean", "a boolean"],
  function: ["function", "a function"],
  object: ["object", "an object"],
  switch: ["boolean object", "a boolean or an object"],
  // Clients send each lone surrogate as U+FFFD: two such ids (or tokens) would name one key (or holder).
  text: [
    "string",
    "a string of well-formed Unicode (no lone surrogate)",
    (v: string) => !LONE_SURROGATE.test(v),
  ],
  id: [
    "string",
    "a non-empty string of well-formed Unicode (no lone surrogate)",
    (v: string) => v !== "" && !LONE_SURROGATE.test(v),
  ],
} as const satisfies Record<string, readonly [string, string, ((value: never) => boolean)?]>;

/** The rules {@link check} knows, and a list of allowed strings. */
export type Rule = keyof typeof RULES | readonly string[];

/**
 * Throws unless `value` follows `rule` (or is undefined or null, as 0.2 read them, and not `required`): a
 * TypeError for a wrong type, else a RangeError, naming both: ``Expected `lease` to be a positive integer
 * (milliseconds), got 1.5``.
 */
export function check(name: string, value: unknown, rule: Rule, required = false): void {
  if (value == null && !required) return;
  const [type, expected, inRange] = Array.isArray(rule)
    ? ["string", rule.map((choice) => JSON.stringify(choice)).join(" or "), (v: string) => rule.includes(v)]
    : RULES[rule as keyof typeof RULES];
  // An array or null is an object to `typeof`, yet the wrong type for an option that wants one.
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  const typeOk = type.split(" ").includes(kind);
  if (typeOk && (!inRange || (inRange as (v: unknown) => boolean)(value))) return;
  const message = `Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`;
  throw typeOk ? new RangeError(message) : new TypeError(message);
}
