// The soak's command line: `npm run soak -- [--seconds N] [--workers N] [--seed N] [--careless]`.

import { parseArgs } from "node:util";
import { integerIn, UsageError } from "../support/cli";

export interface SoakOptions {
  /** How long the workers contend. */
  seconds: number;
  workers: number;
  /** Seeds the fault schedule (the timing of a run is never exactly repeatable). */
  seed: number;
  /** Control run: no auto-extend, holders ignore their signal and lease: the overlap check must fire. */
  careless: boolean;
}

export const USAGE = `usage: npm run soak -- [--seconds N] [--workers N] [--seed N] [--careless]

  --seconds N   how long the workers contend, 1 to 3600 (default 60)
  --workers N   how many worker processes, 2 to 16 (default 8)
  --seed N      seed of the random fault schedule (default: random; printed)
  --careless    control run: no auto-extend, and holders ignore their signal and remaining
                lease; the soak must then report overlaps and exit 1, which shows that
                the check can see them

Starts a private local stack (redis-server plus the Upstash REST proxy), one fault-injecting
pass-through per worker, and the workers. Exit code 0 when clean, 1 on any overlap, unhandled
rejection, lost report or stuck worker, 2 on bad arguments.`;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): SoakOptions | "help" {
  let values: { seconds?: string; workers?: string; seed?: string; careless?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seconds: { type: "string" },
        workers: { type: "string" },
        seed: { type: "string" },
        careless: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return "help";
  return {
    seconds: integerIn("seconds", values.seconds, 60, [1, 3_600]),
    workers: integerIn("workers", values.workers, 8, [2, 16]),
    seed: integerIn("seed", values.seed, Math.floor(Math.random() * 2 ** 31), [0, 2 ** 32 - 1]),
    careless: values.careless === true,
  };
}
