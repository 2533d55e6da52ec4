// The demo's command line: `npm run demo -- [--seconds N] [--workers N] [--fair]`.

import { parseArgs } from "node:util";
import { integerIn, UsageError } from "../support/cli";

export interface DemoOptions {
  /** How long workers keep starting new rounds. */
  seconds: number;
  /** How many workers contend for each lock. */
  workers: number;
  /** Run a fair and an unfair lock side by side, each worker asking again as soon as it released. */
  fair: boolean;
}

export const USAGE = `usage: npm run demo -- [--seconds N] [--workers N] [--fair]

  --seconds N   how long the workers contend, 1 to 60 (default 7, or 10 with --fair)
  --workers N   how many worker processes, 1 to 12 (default 4); with --fair, per lock, 2 to 6
  --fair        fair against unfair turns: two groups of workers contend at the same time, one
                for a lock with default options, one for a lock with \`fair: true\`, each worker
                asking again as soon as it released. Shows both timelines and, for each lock, the
                sections per worker, the least-served worker against the mean, and how often the
                worker that released the lock took it straight back.

Uses UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN when both are set; otherwise starts a
local stack (redis-server plus the Upstash REST proxy) for the run and stops it afterwards.`;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): DemoOptions | "help" {
  let values: { seconds?: string; workers?: string; fair?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seconds: { type: "string" },
        workers: { type: "string" },
        fair: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return "help";
  const fair = values.fair === true;
  return {
    // A saturated lock needs a few more seconds before the turns' pattern stands out.
    seconds: integerIn("seconds", values.seconds, fair ? 10 : 7, [1, 60]),
    // Past a dozen processes the rows stop fitting a terminal and two cores mostly measure
    // scheduling; comparing turns needs at least two workers per lock.
    workers: integerIn("workers", values.workers, 4, fair ? [2, 6] : [1, 12]),
    fair,
  };
}
