// The chaos run's scenarios: every kind of lock the library has, each over @upstash/redis (through
// the REST proxy) and over ioredis (straight to redis-server), each with the faults that can hurt
// it. A scenario's name is `<kind>/<client>`.

/** What the workers of a scenario contend for. */
export type LockKind =
  | "lock"
  | "fair-lock"
  | "semaphore"
  | "fair-semaphore"
  | "quorum-lock"
  | "quorum-semaphore";

/** The client every worker's lock uses. */
export type ClientKind = "upstash" | "ioredis";

/**
 * Faults the parent schedules (scripts/chaos/faults.ts). Faults on the HTTP wire of each worker
 * (latency, dropped replies, 5xx, refusals, outages) run beside them on scenarios marked `lossyWire`.
 */
export type FaultKind =
  /** SIGSTOP one redis-server (a quorum: one member) for a while, then SIGCONT. */
  | "redis-freeze"
  /** `CLIENT KILL TYPE pubsub` on every redis-server: every wake-up subscription drops at once. */
  | "pubsub-kill"
  /** SIGSTOP one worker process (preferably a holder) for a while, then SIGCONT. */
  | "worker-stop"
  /** SIGKILL one worker (in a fair scenario, preferably one queued in line) and start another. */
  | "worker-kill"
  /** A busy loop of a few hundred milliseconds in one worker (preferably a holder). */
  | "stall"
  /**
   * Over HTTP: hold some of the next requests on one wire (a quorum member's, or one worker's on
   * one Redis) while the others pass, so that they reach Redis out of the order they were sent.
   */
  | "reorder";

export interface Scenario {
  readonly name: string;
  readonly kind: LockKind;
  readonly client: ClientKind;
  /** Holders allowed at once: 1 for a lock. */
  readonly limit: number;
  /** Independent redis-servers: 3 for a quorum, else 1. */
  readonly members: number;
  readonly fair: boolean;
  /** Fencing tokens, checked for order: everywhere but on a quorum, which has none. */
  readonly fencing: boolean;
  /** Worker processes on this library. */
  readonly workers: number;
  /** Worker processes on @upstash/lock 0.2.1, on the same key. */
  readonly oldWorkers: number;
  readonly faults: readonly FaultKind[];
  /**
   * Each worker's requests cross a pass-through of their own that drops replies, answers 5xx and
   * refuses requests. Such faults can leave a token behind legitimately (an undo whose every retry
   * was refused; the key then expires with its lease), so the left-behind check is off there.
   */
  readonly lossyWire: boolean;
}

const EVERYWHERE: readonly FaultKind[] = [
  "redis-freeze",
  "pubsub-kill",
  "worker-stop",
  "worker-kill",
  "stall",
];

const KINDS: readonly {
  kind: LockKind;
  limit: number;
  members: number;
  fair: boolean;
  about: string;
}[] = [
  { kind: "lock", limit: 1, members: 1, fair: false, about: "Lock" },
  { kind: "fair-lock", limit: 1, members: 1, fair: true, about: "FairLock" },
  { kind: "semaphore", limit: 3, members: 1, fair: false, about: "Semaphore, limit 3" },
  { kind: "fair-semaphore", limit: 2, members: 1, fair: true, about: "Semaphore, limit 2, fair" },
  { kind: "quorum-lock", limit: 1, members: 3, fair: false, about: "Lock on a quorum of 3" },
  {
    kind: "quorum-semaphore",
    limit: 2,
    members: 3,
    fair: false,
    about: "Semaphore, limit 2, on a quorum of 3",
  },
];

/** What each kind is, for the report's headings. */
export const KIND_ABOUT: Readonly<Record<LockKind, string>> = Object.fromEntries(
  KINDS.map(({ kind, about }) => [kind, about]),
) as Record<LockKind, string>;

export const CLIENT_ABOUT: Readonly<Record<ClientKind, string>> = {
  upstash: "@upstash/redis through the REST proxy",
  ioredis: "ioredis straight to redis-server",
};

const WORKERS = 8;
/** 0.2.1 workers mixed into the plain Lock scenarios: old and new must exclude each other. */
const OLD_WORKERS = 2;

export const SCENARIOS: readonly Scenario[] = KINDS.flatMap(({ kind, limit, members, fair }) =>
  (["upstash", "ioredis"] as const).map((client): Scenario => {
    const quorum = members > 1;
    return {
      name: `${kind}/${client}`,
      kind,
      client,
      limit,
      members,
      fair,
      fencing: !quorum,
      workers: WORKERS,
      oldWorkers: kind === "lock" ? OLD_WORKERS : 0,
      // Requests out of order only happen over HTTP, where each travels on its own; one ioredis
      // connection delivers in order, and a freeze only delays it.
      faults: client === "upstash" ? [...EVERYWHERE, "reorder"] : EVERYWHERE,
      // On a quorum the faults are per member, so that a token left behind is always a defect.
      lossyWire: client === "upstash" && !quorum,
    };
  }),
);

/** The scenarios `--scenario` names: one by its full name, or both clients of a kind by the kind alone. */
export function selectScenarios(name: string | undefined): readonly Scenario[] {
  if (name === undefined) return SCENARIOS;
  return SCENARIOS.filter((scenario) => scenario.name === name || scenario.kind === name);
}

/** Everything `--scenario` accepts. */
export const SCENARIO_NAMES: readonly string[] = [
  ...KINDS.map(({ kind }) => kind),
  ...SCENARIOS.map(({ name }) => name),
];
