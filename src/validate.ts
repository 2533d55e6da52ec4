import { describeValue } from "./describe-value";

/** Throws unless `value` is a positive safe integer; `unit` is named in the message. */
export function assertPositiveInteger(name: string, value: unknown, unit: string): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(
      `Expected \`${name}\` to be a positive integer (${unit}), got ${describeValue(value)}`,
    );
  }
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(
      `Expected \`${name}\` to be a positive integer (${unit}), got ${describeValue(value)}`,
    );
  }
}

/** Throws unless `value` is a safe integer that is zero or more; `unit` is named in the message. */
export function assertNonNegativeInteger(
  name: string,
  value: unknown,
  unit: string,
): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(
      `Expected \`${name}\` to be a non-negative integer (${unit}), got ${describeValue(value)}`,
    );
  }
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `Expected \`${name}\` to be a non-negative integer (${unit}), got ${describeValue(value)}`,
    );
  }
}

/** Throws unless `value` is a finite number that is zero or more; `unit` is named in the message. */
export function assertNonNegativeNumber(name: string, value: unknown, unit: string): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(
      `Expected \`${name}\` to be a non-negative number (${unit}), got ${describeValue(value)}`,
    );
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `Expected \`${name}\` to be a non-negative number (${unit}), got ${describeValue(value)}`,
    );
  }
}

/** Throws unless `value` is a string (empty allowed). */
export function assertString(name: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`${name}\` to be a string, got ${describeValue(value)}`);
  }
}

/** Throws unless `value` is a string with at least one character. */
export function assertNonEmptyString(name: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`${name}\` to be a non-empty string, got ${describeValue(value)}`);
  }
  if (value.length === 0) {
    throw new RangeError(`Expected \`${name}\` to be a non-empty string, got ""`);
  }
}

/** Throws unless `value` is a plain object (or undefined, when `optional`). */
export function assertOptionalObject(name: string, value: unknown): asserts value is object | undefined {
  if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value))) {
    throw new TypeError(`Expected \`${name}\` to be an object, got ${describeValue(value)}`);
  }
}

/** Throws unless `value` is a function. */
export function assertFunction(name: string, value: unknown): asserts value is (...args: never[]) => unknown {
  if (typeof value !== "function") {
    throw new TypeError(`Expected \`${name}\` to be a function, got ${describeValue(value)}`);
  }
}
