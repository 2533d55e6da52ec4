// One contender in the page: its own lock (or semaphore) on its own client, in a loop of think →
// acquire → work → write to the fenced store → release, with the page's three interventions:
// freeze (stops renewing, works on past its lease), kill (stops sending anything), release now.

import type { Redis } from "@upstash/redis";
import type { FencedStore } from "./fenced-store";
import type { RunKeys } from "./keys";
import type { Meter } from "./metered-fetch";
import { enter } from "./occupancy";

/** Long enough to watch it count down, short enough that a frozen holder loses it within seconds. */
export const LEASE_MS = 3_000;
/** Unrelated work between critical sections, and the work inside one, in ms (the terminal demo's). */
const THINK_MS: readonly [number, number] = [50, 300];
const WORK_MS: readonly [number, number] = [100, 400];
/** A worker gives up a wait after this long (then thinks and asks again). */
export const ACQUIRE_TIMEOUT_MS = 15_000;
/**
 * A frozen worker waits at most this long after its loss for a successor's write: none comes when it
 * is the only worker left. Long, so that a slow successor on a busy machine still writes first.
 */
const LATE_WRITE_AFTER_MS = 10_000;
/** After an error (a real database may fail now and then), pause before the next round. */
const ERROR_PAUSE_MS = 500;

/** What a worker holds: a Lease of a Semaphore, or the Lock instance itself, which has the same members. */
export interface Holding {
  readonly signal: AbortSignal;
  readonly fencingToken: number | undefined;
  readonly remainingMs: number;
  release(): Promise<boolean>;
}

/** Acquires with `token` as the uuid; undefined when the wait timed out. */
export type Take = (token: string, signal: AbortSignal) => Promise<Holding | undefined>;

/** "holding": at work, which the page's controls may cut into; "releasing": writing and letting go. */
export type Phase = "thinking" | "waiting" | "holding" | "releasing" | "frozen" | "dead" | "stopped";
/** "stale": frozen after its lease was lost, the time in which only the fence protects the data. */
export type SpanKind = "wait" | "hold" | "frozen" | "stale" | "dead";
export interface Span {
  readonly kind: SpanKind;
  readonly from: number;
  to: number | undefined;
}

/** What the run learns from its workers, to count and to show. */
export interface RunEvents {
  acquired(worker: Worker, waitedFrom: number): void;
  gaveUp(worker: Worker): void;
  /** The most workers the occupancy counter saw inside during one stay. */
  checked(worker: Worker, occupancy: number): void;
  lost(worker: Worker, reason: string): void;
  refused(worker: Worker, fencingToken: number, highest: number): void;
  /** Before release() is sent; the returned mark goes to `released`. */
  releasing(worker: Worker): number;
  released(worker: Worker, mark: number, released: boolean): void;
  error(worker: Worker, error: unknown): void;
}

/** What every worker of a run shares. */
export interface WorkerContext {
  /** Aborts when the run stops. */
  readonly signal: AbortSignal;
  /** The page's own client (no retries), for the occupancy counter and the fenced store. */
  readonly checks: Redis;
  readonly keys: RunKeys;
  readonly store: FencedStore;
  /** The store slot a holder writes to (see fenced-store.ts); undefined once its lease is gone. */
  readonly slotOf: (token: string) => Promise<number | undefined>;
  readonly events: RunEvents;
}

const between = ([min, max]: readonly [number, number]) => min + Math.random() * (max - min);

/** Sleeps `ms`; resolves false instead when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves when any of the signals aborts. */
function aborted(...signals: AbortSignal[]): Promise<void> {
  const any = AbortSignal.any(signals);
  return new Promise((resolve) => {
    if (any.aborted) resolve();
    else any.addEventListener("abort", () => resolve(), { once: true });
  });
}

export class Worker {
  phase: Phase = "thinking";
  sections = 0;
  /** The current acquisition's token (waiting or holding), to tell whose it is in the key and the line. */
  token: string | undefined;
  holding: Holding | undefined;
  fencingToken: number | undefined;
  readonly spans: Span[] = [];
  /** Cuts the current work short: "release now", a kill, the run's end. */
  #cut = new AbortController();
  /** Takes this worker out of the occupancy counter, once per critical section. */
  #leave: (() => Promise<void>) | undefined;

  constructor(
    readonly name: string,
    readonly meter: Meter,
    readonly take: Take,
  ) {}

  /** Read through a getter: the phase changes under a worker's feet while it awaits. */
  get dead(): boolean {
    return this.phase === "dead";
  }

  releaseNow(): void {
    this.#cut.abort();
  }

  /**
   * Holds back every request of this worker's client, so its renewals stop, while its work goes on
   * past the lease. It leaves the occupancy count now: from here it stands for a stalled process,
   * whose late work only the fence can stop (the lock has no way to reach it).
   */
  freeze(): void {
    if (this.phase !== "holding") return;
    this.meter.hold();
    this.phase = "frozen";
    this.#begin("frozen");
    void this.#leave?.();
  }

  /** The worker dies holding: it never sends anything again; its key expires at the end of the lease. */
  kill(): void {
    if (this.phase !== "holding" && this.phase !== "frozen") return;
    this.meter.hold();
    this.phase = "dead";
    this.#begin("dead");
    // A dead process is inside nothing: the page, not the worker, lowers the counter for it.
    void this.#leave?.();
    this.#cut.abort();
  }

  async run(context: WorkerContext): Promise<void> {
    const { signal, events } = context;
    while (!signal.aborted && !this.dead) {
      this.phase = "thinking";
      if (!(await pause(between(THINK_MS), signal))) break;
      try {
        await this.#round(context);
      } catch (error) {
        this.#end();
        if (signal.aborted) break;
        events.error(this, error);
        await pause(ERROR_PAUSE_MS, signal);
      }
    }
    if (!this.dead) {
      this.phase = "stopped";
      this.#end();
    }
  }

  async #round(context: WorkerContext): Promise<void> {
    // A fresh token per acquisition, passed as its uuid, so the page knows whose token is whose.
    const token = crypto.randomUUID();
    this.token = token;
    this.#cut = new AbortController();
    this.phase = "waiting";
    this.#begin("wait");
    const waitedFrom = performance.now();
    const holding = await this.take(token, context.signal);
    if (!holding) {
      this.#end();
      this.token = undefined;
      context.events.gaveUp(this);
      return;
    }
    this.holding = holding;
    this.fencingToken = holding.fencingToken;
    this.phase = "holding";
    this.#begin("hold");
    context.events.acquired(this, waitedFrom);
    try {
      await this.#section(context, holding, token);
    } catch (error) {
      // The checks failed, not the lock: do not leave it held (and renewed) meanwhile.
      if (!this.dead) {
        this.meter.thaw();
        await holding.release().catch(() => false);
      }
      throw error;
    } finally {
      this.#leave = undefined;
      if (!this.dead) {
        this.holding = undefined;
        this.token = undefined;
        this.#end();
      }
    }
  }

  /** From acquire() resolving to release(); the work between is a sleep. */
  async #section(context: WorkerContext, holding: Holding, token: string): Promise<void> {
    const { events, store, signal } = context;
    // `fencing: true` gives every acquisition a token.
    const fence = holding.fencingToken ?? 0;
    holding.signal.addEventListener(
      "abort",
      () => {
        const reason: unknown = holding.signal.reason;
        events.lost(this, (reason as { reason?: string } | undefined)?.reason ?? String(reason));
        if (this.phase === "frozen") this.#begin("stale");
        void this.#leave?.();
      },
      { once: true },
    );
    const [stay, slot] = await Promise.all([
      enter(context.checks, context.keys.inside),
      context.slotOf(token),
    ]);
    let left: Promise<void> | undefined;
    this.#leave = () => {
      // Never rejects: it is also called from an abort listener and from the page's controls.
      left ??= stay.leave().then(
        (occupancy) => events.checked(this, occupancy),
        (error: unknown) => events.error(this, error),
      );
      return left;
    };
    // Frozen or killed (or the lease lost) while the INCR was on its way: out at once.
    if (this.phase !== "holding" || holding.signal.aborted) void this.#leave();
    await pause(between(WORK_MS), AbortSignal.any([signal, this.#cut.signal, holding.signal]));
    if (this.dead) return;
    if (this.phase === "frozen") {
      // Still working, unaware: the lease runs out (its renewals are held back), someone else
      // takes the lock and writes; only then does this worker wake up and write.
      await aborted(holding.signal, signal, this.#cut.signal);
      await store.newerThan(
        slot ?? 0,
        fence,
        LATE_WRITE_AFTER_MS,
        AbortSignal.any([signal, this.#cut.signal]),
      );
      if (this.dead) return;
      this.meter.thaw();
    }
    // From here on the controls leave it alone: a freeze now would hold back its release.
    this.phase = "releasing";
    if (slot !== undefined) {
      const written = await store.write(slot, fence, `${this.name}, section ${this.sections + 1}`);
      if (!written.accepted) events.refused(this, fence, written.highest);
    }
    await this.#leave();
    const mark = events.releasing(this);
    const released = await holding.release();
    this.sections += 1;
    events.released(this, mark, released);
  }

  #begin(kind: SpanKind): void {
    this.#end();
    this.spans.push({ kind, from: performance.now(), to: undefined });
  }

  #end(): void {
    const last = this.spans.at(-1);
    if (last && last.to === undefined) last.to = performance.now();
  }
}
