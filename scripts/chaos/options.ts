// The chaos run's command line: `npm run chaos -- [--seconds N] [--scenario NAME] [--seed N]`.

import { commandLine, integerIn, oneOf } from "../support/options";
import { SCENARIO_NAMES, SCENARIOS } from "./scenarios";

const KINDS = [...new Set(SCENARIOS.map((scenario) => scenario.kind))];

export interface ChaosOptions {
  /** Seconds of chaos per scenario. */
  seconds: number;
  /** A scenario's name, or a kind (both of its clients); undefined runs them all. */
  scenario: string | undefined;
  /** Seeds the fault schedule and the workers' choices. */
  seed: number;
}

const SECONDS = [1, 3_600] as const;
/** Eight seconds each: the twelve scenarios take about 2.5 minutes on a 2-core machine. */
const DEFAULT_SECONDS = 8;
const SEEDS = [0, 2 ** 32 - 1] as const;

const FLAGS = {
  seconds: {
    kind: "integer",
    range: SECONDS,
    help:
      `seconds of chaos per scenario, ${SECONDS.join(" to ")} (default ${DEFAULT_SECONDS}; each scenario ` +
      "adds a few seconds to start its workers and let them finish)",
  },
  scenario: {
    kind: "choice",
    choices: SCENARIO_NAMES,
    help:
      `run one scenario, KIND/CLIENT, or both clients of a KIND; kinds: ${KINDS.join(", ")}; ` +
      `clients: upstash, ioredis; e.g. lock/upstash (default: all ${SCENARIOS.length})`,
  },
  seed: {
    kind: "integer",
    range: SEEDS,
    help:
      `seed of the fault schedule and of the workers' choices, ${SEEDS.join(" to ")} (default: random; printed). ` +
      "The same seed draws the same faults in the same order; their timing against the workers' requests varies",
  },
} as const;

const COMMAND_LINE = commandLine(
  "chaos",
  FLAGS,
  [
    "Runs every scenario in turn (Lock, FairLock, Semaphore, fair Semaphore, a Lock and a Semaphore on a",
    "quorum of 3; each over @upstash/redis through the REST proxy and over ioredis), each on private",
    "redis-servers with 8 worker processes (and 2 on @upstash/lock 0.2.1 on the plain Lock), under",
    "frozen Redis members, dropped wake-up subscriptions, stopped, stalled and killed workers, aborts,",
    "timeouts, 50-300 ms leases, and on @upstash/redis lossy or reordering wires. Each holder asks Redis",
    "directly, while the library says it holds, whether its token still holds. It never touches",
    "UPSTASH_REDIS_REST_URL, and stops whatever it started, also on Ctrl-C.",
    "",
    "Exit code 0 when clean, 1 on any violation (see scripts/chaos/RESULTS.md), 2 on bad arguments.",
  ].join("\n"),
);

export const USAGE = COMMAND_LINE.usage;

/** @returns the options, or "help" when --help was given. */
export function parseOptions(argv: string[]): ChaosOptions | "help" {
  const values = COMMAND_LINE.parse(argv);
  if (values === "help") return "help";
  return {
    seconds: integerIn("seconds", values.seconds, DEFAULT_SECONDS, SECONDS),
    scenario: oneOf("scenario", values.scenario, SCENARIO_NAMES),
    seed: integerIn("seed", values.seed, Math.floor(Math.random() * 2 ** 31), SEEDS),
  };
}
