// The soak's command line: `npm run soak -- [--seconds N] [--workers N] [--poll] [--seed N] [--careless]`.

import { commandLine, integerIn, POLL_FLAG, secondsFlag, workersFlag } from "../support/options";

export interface SoakOptions {
  /** How long the workers contend. */
  seconds: number;
  workers: number;
  /** No `enableWakeUps` in the workers: waiters only poll. */
  poll: boolean;
  /** Seeds the fault schedule (the timing of a run is never exactly repeatable). */
  seed: number;
  /** Control run: no auto-extend, holders ignore their signal and lease: the overlap check must fire. */
  careless: boolean;
}

const SECONDS = [1, 3_600] as const;
const WORKERS = [2, 16] as const;
const SEEDS = [0, 2 ** 32 - 1] as const;

const FLAGS = {
  seconds: secondsFlag(SECONDS, "60"),
  workers: workersFlag(WORKERS, 8),
  poll: POLL_FLAG,
  seed: {
    kind: "integer",
    range: SEEDS,
    help: `seed of the random fault schedule, ${SEEDS.join(" to ")} (default: random; printed)`,
  },
  careless: {
    kind: "switch",
    help:
      "control run: no auto-extend, and holders ignore their signal and remaining lease; the soak " +
      "must then report overlaps and exit 1, which shows that the check can see them",
  },
} as const;

const COMMAND_LINE = commandLine(
  "soak",
  FLAGS,
  "Starts a private local stack (redis-server plus the Upstash REST proxy), one fault-injecting\n" +
    "pass-through per worker, and the workers. Exit code 0 when clean, 1 on any overlap, unhandled\n" +
    "rejection, lost report or stuck worker, 2 on bad arguments.",
);

export const USAGE = COMMAND_LINE.usage;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): SoakOptions | "help" {
  const values = COMMAND_LINE.parse(argv);
  if (values === "help") return "help";
  return {
    seconds: integerIn("seconds", values.seconds, 60, SECONDS),
    workers: integerIn("workers", values.workers, 8, WORKERS),
    poll: values.poll,
    seed: integerIn("seed", values.seed, Math.floor(Math.random() * 2 ** 31), SEEDS),
    careless: values.careless,
  };
}
