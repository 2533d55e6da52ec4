// The demo's command line: `npm run demo -- [--seconds N] [--workers N]`.

import { parseArgs } from "node:util";
import { integerIn, UsageError } from "../support/cli";

export interface DemoOptions {
  /** How long workers keep starting new rounds. */
  seconds: number;
  workers: number;
}

export const USAGE = `usage: npm run demo -- [--seconds N] [--workers N]

  --seconds N   how long the workers contend, 1 to 60 (default 7)
  --workers N   how many worker processes, 1 to 12 (default 4)

Uses UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN when both are set; otherwise starts a
local stack (redis-server plus the Upstash REST proxy) for the run and stops it afterwards.`;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): DemoOptions | "help" {
  let values: { seconds?: string; workers?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seconds: { type: "string" },
        workers: { type: "string" },
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
    seconds: integerIn("seconds", values.seconds, 7, [1, 60]),
    // Past a dozen the rows stop fitting a terminal and two cores mostly measure scheduling.
    workers: integerIn("workers", values.workers, 4, [1, 12]),
  };
}
