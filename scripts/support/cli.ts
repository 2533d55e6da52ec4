// What the demo, the soak, the chaos run and the web demo share as command-line programs: argument
// errors, and a main that parses, runs, turns SIGINT/SIGTERM into an abort, always runs the cleanups,
// and exits.
import { constants } from "node:os";

const interruption = new AbortController();
let exitCodeOfInterrupt = 130;

/**
 * Aborted on the first SIGINT or SIGTERM a program of {@link runCli} receives; later ones change
 * nothing (shutdown is already bounded).
 */
export const interrupted: AbortSignal = interruption.signal;

/** 130 after SIGINT, 143 after SIGTERM, as a shell reports a process those signals killed. */
export function interruptExitCode(): number {
  return exitCodeOfInterrupt;
}

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
  /**
   * Does the work, ending early once {@link interrupted} aborts; pushes what must be undone on the
   * way out onto `cleanups`; resolves with the exit code.
   */
  run(options: Options, cleanups: Array<() => Promise<unknown>>): Promise<number>;
}

/** Runs `program` with the process's arguments, then exits with its code. */
export function runCli<Options>(program: CliProgram<Options>): void {
  // Exit explicitly: idle HTTP keep-alive sockets would otherwise hold the process for seconds.
  void exitCodeOf(program).then((code) => process.exit(code));
}

async function exitCodeOf<Options>(program: CliProgram<Options>): Promise<number> {
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
    process.on(signal, () => {
      if (interrupted.aborted) return;
      exitCodeOfInterrupt = 128 + constants.signals[signal];
      interruption.abort();
    });
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
