// The command lines of the demo, the soak and the chaos run: each declares its flags once, with
// their help, and the usage text is made from the same declarations, so `--help` says what the
// parser takes. The flags they share are declared here, so that they mean the same thing in each.

import { parseArgs } from "node:util";
import { UsageError } from "./cli";

/** `--name N`: a whole number within `range`. */
export interface IntegerFlag {
  readonly kind: "integer";
  readonly range: readonly [number, number];
  readonly help: string;
}

/** `--name`: on when given. */
export interface SwitchFlag {
  readonly kind: "switch";
  readonly help: string;
}

/** `--name WORD`: one of `choices` (checked by {@link oneOf}). */
export interface ChoiceFlag {
  readonly kind: "choice";
  readonly choices: readonly string[];
  readonly help: string;
}

export type Flag = IntegerFlag | SwitchFlag | ChoiceFlag;

/** What the parser read: an integer or choice flag's text (checked by {@link integerIn}, {@link oneOf}), a switch's presence. */
export type FlagValues<Flags extends Record<string, Flag>> = {
  readonly [Name in keyof Flags]: Flags[Name]["kind"] extends "switch" ? boolean : string | undefined;
};

/** `--seconds N`: how long the workers contend. */
export function secondsFlag(range: readonly [number, number], fallback: string): IntegerFlag {
  return {
    kind: "integer",
    range,
    help: `how long the workers contend, ${span(range)} (default ${fallback})`,
  };
}

/** `--workers N`: how many worker processes contend; `more` adds to the help (another range, say). */
export function workersFlag(range: readonly [number, number], fallback: number, more = ""): IntegerFlag {
  return {
    kind: "integer",
    range,
    help: `how many worker processes, ${span(range)} (default ${fallback})${more}`,
  };
}

/** `--poll`: the workers never call `enableWakeUps`, so a Lock's waiters only poll (its default). */
export const POLL_FLAG: SwitchFlag = {
  kind: "switch",
  help:
    "no enableWakeUps(redis) in the workers: a Lock's waiters only poll, its default (a FairLock " +
    "still enables wake-ups on @upstash/redis by itself); without it, every worker's client has wake-ups",
};

function span([min, max]: readonly [number, number]): string {
  return `${min} to ${max}`;
}

/** A whole-number flag within `[min, max]`, or `fallback` when absent. */
export function integerIn(
  name: string,
  text: string | undefined,
  fallback: number,
  [min, max]: readonly [number, number],
): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(
      `--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** A choice flag's value, or undefined when absent. */
export function oneOf(
  name: string,
  text: string | undefined,
  choices: readonly string[],
): string | undefined {
  if (text === undefined || choices.includes(text)) return text;
  throw new UsageError(`--${name} must be one of ${choices.join(", ")}; got ${JSON.stringify(text)}`);
}

/** A program's command line: `npm run <command> -- [flags]`. */
export interface CommandLine<Flags extends Record<string, Flag>> {
  /** The usage text: the synopsis, one entry per flag, then `about`. */
  readonly usage: string;
  /** @returns the flags' values, or "help" for `--help`/`-h`; throws UsageError on anything else. */
  parse(argv: string[]): FlagValues<Flags> | "help";
}

const HELP_COLUMN = 16;
const LINE_WIDTH = 100;

/** The command line of `npm run <command>` taking `flags` (in the order given) and `--help`. */
export function commandLine<Flags extends Record<string, Flag>>(
  command: string,
  flags: Flags,
  about: string,
): CommandLine<Flags> {
  const entries = Object.entries(flags);
  const synopsis = entries.map(([name, flag]) => `[${label(name, flag)}]`);
  const usage = [
    `usage: npm run ${command} -- ${synopsis.join(" ")}`,
    "",
    ...entries.flatMap(([name, flag]) => helpLines(label(name, flag), flag.help)),
    ...helpLines("--help", "this text"),
    "",
    about,
  ].join("\n");
  return {
    usage,
    parse(argv) {
      let values: Record<string, string | boolean | undefined>;
      try {
        ({ values } = parseArgs({
          args: argv,
          options: {
            ...Object.fromEntries(
              entries.map(([name, flag]) => [name, { type: flag.kind === "switch" ? "boolean" : "string" }]),
            ),
            help: { type: "boolean", short: "h" },
          },
          strict: true,
          allowPositionals: false,
        }));
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      }
      if (values.help) return "help";
      return Object.fromEntries(
        entries.map(([name, flag]) => [name, flag.kind === "switch" ? values[name] === true : values[name]]),
      ) as FlagValues<Flags>;
    },
  };
}

/** `--name N` for an integer flag, `--name NAME` for a choice, `--name` for a switch. */
function label(name: string, flag: Flag): string {
  return `--${name}${flag.kind === "integer" ? " N" : flag.kind === "choice" ? " NAME" : ""}`;
}

/** `  --name N      help`, the help wrapped to the line width and indented under its column. */
function helpLines(label: string, help: string): string[] {
  const lines: string[] = [];
  let line = `  ${label}`.padEnd(HELP_COLUMN - 1);
  for (const word of help.split(" ")) {
    if (line.length + 1 + word.length > LINE_WIDTH && line.length > HELP_COLUMN) {
      lines.push(line);
      line = " ".repeat(HELP_COLUMN - 1);
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines;
}
