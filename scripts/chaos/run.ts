// Runs one scenario: its servers, its worker processes (replacing those the schedule kills), its
// fault schedule until the deadline; then waits for every worker to finish and exit by itself, and
// checks across the workers what no single one can see.

import { setTimeout as pause } from "node:timers/promises";
import { companionKey } from "../../src/keys";
import { type FaultCounts, seededRandom } from "../soak/faults";
import { startWorker, type WorkerProcess } from "../support/workers";
import { crowding, fencingDisorder, type HoldRecord } from "./checks";
import { ChaosSchedule, type Victim } from "./faults";
import {
  type ChaosWorkerConfig,
  emptyTally,
  parseWorkerLine,
  type Tally,
  type ViolationKind,
  type WorkerLine,
} from "./protocol";
import type { Scenario } from "./scenarios";
import { type Lane, type Stage, startStage } from "./stage";
import { within } from "./within";

const WORKER_SCRIPT = new URL("./worker.ts", import.meta.url);
/** tsx on two busy cores compiles a worker in a few seconds; this only catches a hung start. */
const READY_TIMEOUT_MS = 60_000;
/** After the deadline a worker ends its round (acquire ≤ 1.5 s, hold ≤ 0.6 s, pending ≤ 3 s) and reports. */
const FINISH_TIMEOUT_MS = 15_000;
/** After its last line, a worker must exit by itself within this long: nothing may keep it alive. */
export const EXIT_LIMIT_MS = 5_000;
/** A worker killed closer than this to the deadline is not replaced: its replacement would start too late. */
const REPLACE_BEFORE_MS = 3_000;

export interface Violation {
  readonly kind: ViolationKind;
  readonly worker: string | undefined;
  readonly detail: string;
  /** The worker's round it happened in: one incident may be reported by many probes. */
  readonly round?: number | null;
}

/** How a worker process ended. */
export type Ending = "exited" | "killed" | "no-exit" | "crashed";

export interface WorkerSummary {
  readonly name: string;
  readonly library: ChaosWorkerConfig["library"];
  readonly tally: Tally;
  readonly ending: Ending;
  /** What it printed besides its protocol lines. */
  readonly output: readonly string[];
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  /** Wall-clock ms of chaos (the deadline minus the go). */
  readonly chaosMs: number;
  /** Wall-clock ms from the first server's start to the last worker's exit. */
  readonly totalMs: number;
  readonly workers: readonly WorkerSummary[];
  readonly faults: Readonly<Record<string, number>>;
  readonly violations: readonly Violation[];
}

/** One worker process and what the parent learned from it. */
class Slot implements Victim {
  state: Victim["state"] = "idle";
  stopped = false;
  went = false;
  killedAt: number | undefined;
  doneAt: number | undefined;
  tally = emptyTally();
  readonly holds = new Map<
    number,
    { start: number; until: number; calledAt: number; fence: number | null; end?: number }
  >();
  // Set right after construction: the process reports to the slot from its first line.
  process!: WorkerProcess;

  constructor(
    readonly name: string,
    readonly library: ChaosWorkerConfig["library"],
    readonly lane: Lane | undefined,
  ) {}

  get wire() {
    return this.lane?.passThrough;
  }

  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    this.process.signal(signal);
  }

  stall(ms: number): void {
    this.process.send({ type: "stall", ms });
  }
}

/** FNV-1a of the name, mixed with the seed: each scenario draws its own sequence from one `--seed`. */
export function scenarioSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return (hash ^ seed) >>> 0;
}

export async function runScenario(
  scenario: Scenario,
  seconds: number,
  seed: number,
  interrupt: AbortSignal,
  say: (line: string) => void,
): Promise<ScenarioResult> {
  const began = Date.now();
  const schedule = seededRandom(scenarioSeed(seed, scenario.name));
  // Workers and their wires draw their seeds from a stream of their own, and each wire faults
  // from its own generator: neither shifts the schedule's sequence.
  const seeds = seededRandom(scenarioSeed(seed, scenario.name) ^ 0x9e3779b9);
  const nextSeed = () => Math.floor(seeds() * 2 ** 32);
  const lockId = `chaos:${scenario.kind}`;
  const stage = await startStage(scenario);
  const slots: Slot[] = [];
  const violations: Violation[] = [];
  let deadline = Number.POSITIVE_INFINITY;

  const spawn = async (name: string, library: Slot["library"]): Promise<Slot> => {
    const { endpoints, lane } = await stage.endpointsFor(seededRandom(nextSeed()));
    const slot = new Slot(name, library, lane);
    const config: ChaosWorkerConfig = {
      name,
      library,
      scenario,
      lockId,
      members: endpoints,
      seed: nextSeed(),
    };
    slot.process = startWorker<WorkerLine>({
      name,
      script: WORKER_SCRIPT,
      config,
      nodeArgs: ["--no-warnings"],
      parse: parseWorkerLine,
      isReady: (line) => line.type === "ready",
      onMessage: (line, at) => onLine(slot, line, at),
    });
    slots.push(slot);
    return slot;
  };

  const onLine = (slot: Slot, line: WorkerLine, at: number) => {
    switch (line.type) {
      case "state":
        slot.state = line.state;
        break;
      case "hold":
        slot.holds.set(line.hold, {
          start: line.start,
          until: line.until,
          calledAt: line.calledAt,
          fence: line.fence,
        });
        break;
      case "unhold": {
        const hold = slot.holds.get(line.hold);
        if (hold) hold.end = line.end;
        break;
      }
      case "violation":
        violations.push({ kind: line.kind, worker: slot.name, detail: line.detail, round: line.round });
        break;
      case "tally":
        slot.tally = line.tally;
        break;
      case "done":
        slot.tally = line.tally;
        slot.doneAt = at;
        break;
      case "ready":
        break;
    }
  };

  const go = (slot: Slot) => {
    slot.went = true;
    slot.process.go({ deadline });
    slot.lane?.injector.start();
  };

  let replacing = false;
  /** Kills a worker and, while there is time, starts another under the same name with a suffix. */
  const kill = (victim: Victim): boolean => {
    if (replacing) return false;
    const slot = victim as Slot;
    slot.killedAt = Date.now();
    void slot.process.kill();
    slot.lane?.injector.stop();
    if (deadline - Date.now() < REPLACE_BEFORE_MS || interrupt.aborted) return true;
    const base = slot.name.split(".")[0] as string;
    const generation = slots.filter((other) => other.name.split(".")[0] === base).length + 1;
    replacing = true;
    spawn(`${base}.${generation}`, slot.library)
      .then(async (replacement) => {
        await replacement.process.ready;
        if (Date.now() < deadline && !interrupt.aborted) go(replacement);
      })
      .catch((error: unknown) => {
        violations.push({
          kind: "crash",
          worker: slot.name,
          detail: `its replacement did not start: ${String(error)}`,
        });
      })
      .finally(() => {
        replacing = false;
      });
    return true;
  };

  const faults = new ChaosSchedule(
    scenario,
    {
      members: stage.members,
      victims: () =>
        slots.filter((slot) => slot.went && slot.killedAt === undefined && slot.doneAt === undefined),
      kill,
    },
    schedule,
  );

  try {
    for (let index = 1; index <= scenario.workers; index++) await spawn(`w${index}`, "current");
    for (let index = 1; index <= scenario.oldWorkers; index++) await spawn(`old${index}`, "0.2.1");
    const ready = await within(
      Promise.all(slots.map((slot) => slot.process.ready)).then(() => "ready" as const),
      READY_TIMEOUT_MS,
      "timeout" as const,
    );
    if (ready === "timeout") throw new Error(`workers were not ready within ${READY_TIMEOUT_MS} ms`);
    const readyAt = Date.now();
    say(`ready in ${((readyAt - began) / 1000).toFixed(1)} s; ${seconds} s of chaos...`);
    deadline = readyAt + seconds * 1000;
    for (const slot of [...slots]) go(slot);
    faults.start();
    await pause(deadline - Date.now(), undefined, { signal: interrupt }).catch(() => undefined);
    faults.stop();
    for (const lane of stage.lanes) lane.injector.stop();
    if (interrupt.aborted) for (const slot of slots) slot.process.closeInput();

    const endings = new Map(
      await Promise.all(slots.map(async (slot) => [slot, await settle(slot, violations)] as const)),
    );
    const origin = deadline - seconds * 1000;
    violations.push(...acrossWorkers(scenario, slots, origin), ...(await keysLeft(scenario, stage, lockId)));
    return {
      scenario,
      chaosMs: seconds * 1000,
      totalMs: Date.now() - began,
      workers: slots
        .filter((slot) => slot.went)
        .map((slot) => ({
          name: slot.name,
          library: slot.library,
          tally: slot.tally,
          ending: endings.get(slot) ?? "crashed",
          output: slot.process.output,
        })),
      faults: { ...faults.counts, ...(scenario.lossyWire ? wireFaults(stage.lanes) : {}) },
      violations,
    };
  } finally {
    faults.stop();
    await Promise.all(slots.map((slot) => slot.process.kill()));
    await stage.stop();
  }
}

/** What no single worker can see: too many holders at once, fencing tokens out of order. */
function acrossWorkers(scenario: Scenario, slots: readonly Slot[], origin: number): Violation[] {
  const holds = slots.flatMap(holdsOf);
  const found = crowding(holds, scenario.limit, origin).map(
    (detail): Violation => ({ kind: "overlap", worker: undefined, detail }),
  );
  if (scenario.fencing) {
    for (const detail of fencingDisorder(holds, scenario.limit, origin)) {
      found.push({ kind: "fencing", worker: undefined, detail });
    }
  }
  return found;
}

/** Keys that no lease will ever expire, once every worker is gone. */
async function keysLeft(scenario: Scenario, stage: Stage, lockId: string): Promise<Violation[]> {
  // A counted fencing counter (Upstash's, which keeps its data) never expires, by design.
  const fence = companionKey(lockId, ":fence");
  const keys = await stage.keysWithoutExpiry((key) => scenario.client === "upstash" && key === fence);
  return keys.map((key) => ({ kind: "immortal-key", worker: undefined, detail: `${key} has no expiry` }));
}

/** The lossy wires' faults, summed over the lanes. */
function wireFaults(lanes: readonly Lane[]): Record<string, number> {
  const sum = (pick: (counts: FaultCounts) => number) =>
    lanes.reduce((total, lane) => total + pick(lane.injector.counts), 0);
  return {
    "wire-latency": sum((counts) => counts.latencySpikes),
    "wire-drop": sum((counts) => counts.droppedReplies),
    "wire-5xx": sum((counts) => counts.status5xx),
    "wire-refuse": sum((counts) => counts.refused),
    "wire-outage": sum((counts) => counts.outages),
  };
}

/** Waits for one worker's last line and its exit; names what went wrong. */
async function settle(slot: Slot, violations: Violation[]): Promise<Ending> {
  if (slot.killedAt !== undefined) return "killed";
  if (!slot.went) {
    // A replacement that was still starting at the deadline: it never contended.
    await slot.process.kill();
    return "killed";
  }
  const exit = await within(slot.process.exited, FINISH_TIMEOUT_MS + EXIT_LIMIT_MS, undefined);
  const blame = (kind: ViolationKind, detail: string): Ending => {
    violations.push({ kind, worker: slot.name, detail });
    return kind === "no-exit" ? "no-exit" : "crashed";
  };
  if (!exit) {
    await slot.process.kill();
    return slot.doneAt === undefined
      ? blame("crash", "never finished its round; killed")
      : blame("no-exit", "finished but did not exit by itself; killed");
  }
  if (slot.doneAt === undefined)
    return blame("crash", `exited (code ${exit.code ?? exit.signal}) without finishing`);
  if (exit.at - slot.doneAt > EXIT_LIMIT_MS) {
    return blame("no-exit", `exited ${exit.at - slot.doneAt} ms after it finished`);
  }
  if (exit.code !== 0) return blame("crash", `exited with code ${exit.code ?? exit.signal}`);
  return "exited";
}

/** A worker's holds; one it never reported ended (killed) ends when it died, or at its deadline. */
function holdsOf(slot: Slot): HoldRecord[] {
  return [...slot.holds.values()].map((hold) => ({
    worker: slot.name,
    start: hold.start,
    end: hold.end ?? Math.min(hold.until, slot.killedAt ?? hold.until),
    calledAt: hold.calledAt,
    fence: hold.fence,
  }));
}
