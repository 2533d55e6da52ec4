// What the demo and the soak share as command-line programs: argument errors, and a main that
// parses, runs, turns SIGINT/SIGTERM into an abort, and always runs the cleanups.
import { constants } from "node:os";

/** Bad arguments: the program prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A command-line program for {@link runCli}. */
export interface CliProgram<Options> {
  /** Prefix of its error lines, e.g. "demo". */
  readonly name: string;
  readonly usage: string;
  /** @returns the options, or "help"; throws UsageError on bad arguments. */
  parse(argv: string[]): Options | "help";
  /** Called on SIGINT or SIGTERM with the exit code they call for (128 + the signal number). */
  onInterrupt(exitCode: number): void;
  /** Does the work; pushes what must be undone on the way out onto `cleanups`. */
  run(options: Options, cleanups: Array<() => Promise<unknown>>): Promise<number>;
}

/** Runs `program` with the process's arguments and resolves with its exit code. */
export async function runCli<Options>(program: CliProgram<Options>): Promise<number> {
  let options: Options | "help";
  try {
    options = program.parse(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${program.name}: ${error.message}\n\n${program.usage}\n`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(`${program.usage}\n`);
    return 0;
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => program.onInterrupt(128 + constants.signals[signal]));
  }
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    return await program.run(options, cleanups);
  } catch (error) {
    process.stderr.write(`${program.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) =>
        process.stderr.write(`${program.name}: cleanup failed: ${String(error)}\n`),
      );
    }
  }
}
