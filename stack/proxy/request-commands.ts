import type { Command } from "../resp/command";
import { HttpError } from "./http-error";

/**
 * Validates the body of `POST /`: one command, `[name, ...args]`.
 *
 * @throws HttpError 400 for anything else.
 */
export function parseSingleCommand(body: unknown): Command {
  return toCommand(body, "the command");
}

/**
 * Validates the body of `/pipeline` and `/multi-exec`: an array of commands.
 *
 * @throws HttpError 400 for anything else.
 */
export function parseCommandList(body: unknown): Command[] {
  if (!Array.isArray(body)) {
    throw new HttpError(
      400,
      'ERR invalid request body: expected an array of commands like [["SET","k","v"]]',
    );
  }
  return body.map((command, index) => toCommand(command, `command ${index + 1}`));
}

function toCommand(value: unknown, where: string): Command {
  if (!Array.isArray(value)) {
    throw new HttpError(400, `ERR invalid ${where}: expected an array like ["SET","k","v"]`);
  }
  if (value.length === 0) {
    throw new HttpError(400, `ERR invalid ${where}: the command is empty`);
  }
  return value.map((arg, index) => toArgument(arg, where, index));
}

/**
 * Coerces a JSON scalar the way the Upstash client expects: numbers with `String(n)`, booleans as
 * `true`/`false`, `null` as `"null"` (a JS `NaN` arrives as `null`; Redis then reports the bad value).
 */
function toArgument(value: unknown, where: string, index: number): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
      return String(value);
    default:
      if (value === null) {
        return "null";
      }
      throw new HttpError(
        400,
        `ERR invalid ${where}: argument ${index + 1} is an array or object; only strings, numbers, booleans and null are accepted`,
      );
  }
}
