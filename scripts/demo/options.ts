// The demo's command line: `npm run demo -- [--seconds N] [--workers N] [--poll] [--fair]`.

import { commandLine, integerIn, POLL_FLAG, secondsFlag, workersFlag } from "../support/options";

export interface DemoOptions {
  /** How long workers keep starting new rounds. */
  seconds: number;
  /** How many workers contend for each lock. */
  workers: number;
  /** No `enableWakeUps` in the workers: waiters only poll. */
  poll: boolean;
  /** Run a fair and an unfair lock side by side, each worker asking again as soon as it released. */
  fair: boolean;
}

const SECONDS = [1, 60] as const;
// Past a dozen processes the rows stop fitting a terminal and two cores mostly measure scheduling;
// comparing turns needs at least two workers per lock.
const WORKERS = [1, 12] as const;
const WORKERS_PER_LOCK = [2, 6] as const;

const FLAGS = {
  seconds: secondsFlag(SECONDS, "7, or 10 with --fair"),
  workers: workersFlag(WORKERS, 4, `; with --fair, per lock, ${WORKERS_PER_LOCK.join(" to ")}`),
  poll: POLL_FLAG,
  fair: {
    kind: "switch",
    help:
      "fair against unfair turns: two groups of workers contend at the same time, one for a `new Lock`, " +
      "one for a `new FairLock`, each worker asking again as soon as it released. Shows both timelines " +
      "and, for each lock, the sections per worker, the least-served worker against the mean, and how " +
      "often the worker that released the lock took it straight back.",
  },
} as const;

const COMMAND_LINE = commandLine(
  "demo",
  FLAGS,
  "Uses UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN when both are set; otherwise starts a\n" +
    "local stack (redis-server plus the Upstash REST proxy) for the run and stops it afterwards.",
);

export const USAGE = COMMAND_LINE.usage;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): DemoOptions | "help" {
  const values = COMMAND_LINE.parse(argv);
  if (values === "help") return "help";
  const { fair, poll } = values;
  return {
    // A saturated lock needs a few more seconds before the turns' pattern stands out.
    seconds: integerIn("seconds", values.seconds, fair ? 10 : 7, SECONDS),
    workers: integerIn("workers", values.workers, 4, fair ? WORKERS_PER_LOCK : WORKERS),
    poll,
    fair,
  };
}
