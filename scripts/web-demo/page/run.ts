// One run of the page: its keys, its workers (each a lock or semaphore on a client of its own), the
// page's own client for the checks, and every number the page shows, as `window.demoState` reads it.

import { enableWakeUps, FairLock, Lock, Semaphore } from "@upstash/lock";
import { Redis } from "@upstash/redis";
import { FencedStore } from "./fenced-store";
import { fingerprint, type RunKeys, runKeys } from "./keys";
import { type Meter, newMeter, unclaimed } from "./metered-fetch";
import { ACQUIRE_TIMEOUT_MS, LEASE_MS, type RunEvents, type Take, Worker } from "./worker";

export interface RunSettings {
  readonly kind: "lock" | "semaphore";
  readonly fair: boolean;
  /** Permits of the semaphore; 1 for a lock. */
  readonly limit: number;
  readonly workers: number;
  readonly url: string;
  readonly token: string;
  /** The URL worker `i` (from 0) reaches the database at (see `workerUrl` in main.ts). */
  readonly workerUrl: (index: number) => string;
}

/** One key that holds the lock or a permit, as Redis last showed it. */
export interface HolderView {
  readonly key: string;
  readonly fingerprint: string | undefined;
  readonly worker: Worker | undefined;
  /** Redis's PTTL in ms; negative when the key is gone. */
  readonly pttl: number;
}

/** A waiter in the fair line, in order. */
export interface WaiterView {
  readonly fingerprint: string;
  readonly worker: Worker | undefined;
}

/** How often the page reads the key(s) and the fair line: cheap, and smooth enough to watch. */
const WATCH_MS = 250;
/** The event log keeps this many lines. */
const LOG_LINES = 8;
/** Handover samples and errors kept: the latest ones. */
const KEPT = 500;
/** How long stopping may wait for the workers to let go; a dead worker never does. */
const STOP_WAIT_MS = 5_000;

/** What a client (or several) sent. */
export interface Traffic {
  readonly commands: number;
  readonly requests: number;
  readonly subscriptions: number;
}

const traffic = ({ commands, requests, subscriptions }: Traffic): Traffic => ({
  commands,
  requests,
  subscriptions,
});

const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);

function message(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export class Run {
  readonly keys: RunKeys;
  readonly workers: Worker[] = [];
  readonly store: FencedStore;
  readonly startedAt = performance.now();
  /** The page's own client, metered apart: its commands are the demo's, not the lock's. */
  readonly checksMeter: Meter = newMeter();
  readonly log: string[] = [];
  readonly errors: string[] = [];
  overlaps = 0;
  maxOccupancy = 0;
  losses = 0;
  gaveUp = 0;
  lostReleases = 0;
  /** The latest handover latencies, ms: from a release() call to the next acquire() resolving. */
  readonly handovers: number[] = [];
  handoversMeasured = 0;
  holders: HolderView[] = [];
  line: WaiterView[] = [];
  readonly #checks: Redis;
  readonly #stop = new AbortController();
  readonly #settings: RunSettings;
  /** Whether a read of the keys is on its way: a slow database must not pile them up. */
  #watching = false;
  readonly #unclaimedAtStart = traffic(unclaimed);
  /** Releases not yet followed by an acquisition, in order: [mark, when]. */
  readonly #releases: Array<[number, number]> = [];
  #marks = 0;
  /** Frozen or killed workers whose successor has not been named in the log yet. */
  readonly #orphans = new Set<Worker>();
  /** A freeze or kill asked for while nobody held: it goes to the next holder. */
  #next: "freeze" | "kill" | undefined;
  readonly #pending: Array<Promise<unknown>> = [];
  readonly #loops: Array<Promise<void>>;
  readonly #watch: ReturnType<typeof setInterval>;

  constructor(settings: RunSettings) {
    this.#settings = settings;
    this.keys = runKeys(settings.kind === "semaphore" ? settings.limit : undefined);
    this.#checks = new Redis({
      url: settings.url,
      token: settings.token,
      signal: this.checksMeter.signal,
      // No retries: an INCR of the occupancy counter retried after a lost reply would count twice.
      retry: false,
      automaticDeserialization: false,
      enableTelemetry: false,
      keepAlive: false,
    });
    this.store = new FencedStore(this.#checks, this.keys.store);
    for (let i = 0; i < settings.workers; i++) {
      const meter = newMeter();
      this.workers.push(new Worker(`w${i + 1}`, meter, this.#contender(settings.workerUrl(i), meter)));
    }
    const context = {
      signal: this.#stop.signal,
      checks: this.#checks,
      keys: this.keys,
      store: this.store,
      slotOf: (token: string) => this.#slotOf(token),
      events: this.#events(),
    };
    this.#loops = this.workers.map((worker) => worker.run(context));
    this.#watch = setInterval(() => void this.#watchKeys(), WATCH_MS);
  }

  get settings(): RunSettings {
    return this.#settings;
  }

  /** Each worker's own client, with wake-ups on, and its own lock or semaphore on it. */
  #contender(url: string, meter: Meter): Take {
    const redis = new Redis({
      url,
      token: this.#settings.token,
      // The meter's signal names this client's requests in the metered fetch.
      signal: meter.signal,
      enableTelemetry: false,
      // Chromium caps the bodies of `keepalive` requests in flight at 64 KB per page; a dozen workers
      // sending scripts in full at once could reach it. Nothing here needs to outlive the page.
      keepAlive: false,
    });
    enableWakeUps(redis);
    const options = {
      id: this.keys.id,
      redis,
      lease: LEASE_MS,
      fencing: true,
      // Renewed in the background, so only a frozen worker (whose renewals are held back) loses a lease.
      autoExtend: true,
      retry: { delay: 50 },
    } as const;
    const config = (uuid: string, signal: AbortSignal) => ({ uuid, signal, timeout: ACQUIRE_TIMEOUT_MS });
    if (this.#settings.kind === "semaphore") {
      const semaphore = new Semaphore({ ...options, limit: this.#settings.limit, fair: this.#settings.fair });
      this.#pending.push(semaphore.pending);
      return (uuid, signal) => semaphore.acquire(config(uuid, signal));
    }
    const lock = this.#settings.fair ? new FairLock(options) : new Lock(options);
    this.#pending.push(lock.pending);
    return async (uuid, signal) => ((await lock.acquire(config(uuid, signal))) ? lock : undefined);
  }

  #say(line: string): void {
    const seconds = ((performance.now() - this.startedAt) / 1000).toFixed(1).padStart(5);
    this.log.push(`${seconds}s  ${line}`);
    if (this.log.length > LOG_LINES) this.log.shift();
  }

  #events(): RunEvents {
    return {
      acquired: (worker, waitedFrom) => {
        const now = performance.now();
        const [, releasedAt] = this.#releases.shift() ?? [];
        // Only a release during this wait hands over to it; an earlier one found nobody waiting.
        if (releasedAt !== undefined && releasedAt >= waitedFrom) {
          this.handoversMeasured += 1;
          this.handovers.push(now - releasedAt);
          // The page runs for as long as it is open: keep a window, not every sample.
          if (this.handovers.length > KEPT) this.handovers.shift();
        }
        // A semaphore's next holder may have taken another permit: only a lock's takes over.
        if (this.#settings.kind === "lock") {
          for (const orphan of this.#orphans) {
            this.#say(`${worker.name} took over from ${orphan.name}, fencing token ${worker.fencingToken}`);
          }
        }
        this.#orphans.clear();
        if (this.#next) this.#intervene(worker, this.#next);
      },
      gaveUp: () => {
        this.gaveUp += 1;
      },
      checked: (worker, occupancy) => {
        this.maxOccupancy = Math.max(this.maxOccupancy, occupancy);
        if (occupancy <= this.#settings.limit) return;
        this.overlaps += 1;
        this.#say(`OVERLAP: ${worker.name} saw ${occupancy} workers inside`);
      },
      lost: (worker, reason) => {
        this.losses += 1;
        this.#say(`${worker.name}: lease lost (${reason}); its lease.signal aborted`);
      },
      refused: (worker, fencingToken, highest) => {
        this.#say(
          `${worker.name}: late write with fencing token ${fencingToken} REFUSED (store has ${highest})`,
        );
      },
      releasing: () => {
        this.#marks += 1;
        this.#releases.push([this.#marks, performance.now()]);
        return this.#marks;
      },
      released: (_worker, mark, released) => {
        if (released) return;
        // Nothing was handed over: the lease was gone already.
        this.lostReleases += 1;
        const at = this.#releases.findIndex(([m]) => m === mark);
        if (at >= 0) this.#releases.splice(at, 1);
      },
      error: (worker, error) => {
        this.errors.push(`${worker.name}: ${message(error)}`);
        if (this.errors.length > KEPT) this.errors.shift();
        this.#say(`${worker.name}: ERROR ${message(error)}`);
      },
    };
  }

  /** The holding worker the controls act on: the one that has held longest. */
  #holder(): Worker | undefined {
    const holding = this.workers.filter((worker) => worker.phase === "holding");
    return holding.sort((a, b) => (a.spans.at(-1)?.from ?? 0) - (b.spans.at(-1)?.from ?? 0))[0];
  }

  /**
   * Freezes the holder, or, between two holders, the next one: a click should never miss.
   * @see Worker.freeze
   */
  freezeHolder(): void {
    const worker = this.#holder();
    if (worker) this.#intervene(worker, "freeze");
    else this.#next = "freeze";
  }

  /** Kills the holder, or the next one. @see Worker.kill */
  killHolder(): void {
    const worker = this.#holder();
    if (worker) this.#intervene(worker, "kill");
    else this.#next = "kill";
  }

  #intervene(worker: Worker, what: "freeze" | "kill"): void {
    this.#next = undefined;
    this.#orphans.add(worker);
    if (what === "freeze") {
      worker.freeze();
      this.#say(`${worker.name} frozen: renewals held back, working on past its lease`);
    } else {
      worker.kill();
      this.#say(`${worker.name} killed: it sends nothing more; its key expires with the lease`);
    }
  }

  releaseHolder(): void {
    this.#holder()?.releaseNow();
  }

  /** The store slot of the holder of `token`: its permit's, found by reading the permits' keys. */
  async #slotOf(token: string): Promise<number | undefined> {
    const { holders } = this.keys;
    if (holders.length === 1) return 0;
    const values = await this.#checks.mget<unknown[]>(...holders);
    const slot = values.indexOf(token);
    return slot < 0 ? undefined : slot;
  }

  /** Reads every holder key (value and PTTL) and the fair line, in one pipeline. */
  async #watchKeys(): Promise<void> {
    if (this.#watching) return;
    this.#watching = true;
    try {
      await this.#readKeys();
    } catch {
      // The next tick reads again.
    } finally {
      this.#watching = false;
    }
  }

  async #readKeys(): Promise<void> {
    const { holders, queue } = this.keys;
    const pipeline = this.#checks.pipeline();
    for (const key of holders) pipeline.get(key).pttl(key);
    if (this.#settings.fair) pipeline.zrange(queue, 0, -1);
    const replies: unknown[] = await pipeline.exec();
    const whose = (token: string) => this.workers.find((worker) => worker.token === token);
    this.holders = await Promise.all(
      holders.map(async (key, i) => {
        const token = replies[2 * i];
        const known = typeof token === "string";
        return {
          key,
          fingerprint: known ? await fingerprint(token) : undefined,
          worker: known ? whose(token) : undefined,
          pttl: Number(replies[2 * i + 1]),
        };
      }),
    );
    const members = this.#settings.fair ? replies[2 * holders.length] : [];
    this.line = await Promise.all(
      (Array.isArray(members) ? members : []).map(async (member: string) => {
        // A member is "<call id>:<grant ms>:<token>" (src/permits/queue.ts); the token comes last.
        const token = member.split(":").slice(2).join(":");
        return { fingerprint: await fingerprint(token), worker: whose(token) };
      }),
    );
  }

  /** What the lock sent: its workers' clients, and the wake-up streams opened since the run began. */
  lockTraffic(): Traffic {
    const sum = (field: keyof Traffic) =>
      this.workers.reduce((total, worker) => total + worker.meter[field], 0) +
      unclaimed[field] -
      this.#unclaimedAtStart[field];
    return { commands: sum("commands"), requests: sum("requests"), subscriptions: sum("subscriptions") };
  }

  get sections(): number {
    return this.workers.reduce((total, worker) => total + worker.sections, 0);
  }

  /** Sections of the least served worker and the mean, for the fairness line. */
  fairness(): { least: number; mean: number } {
    const counts = this.workers.map((worker) => worker.sections);
    return { least: Math.min(...counts), mean: this.sections / Math.max(1, counts.length) };
  }

  /** Stops the workers (a holder releases), waits for them within reason, and deletes the run's keys. */
  async stop(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    clearInterval(this.#watch);
    await within(Promise.all([...this.#loops, ...this.#pending]), STOP_WAIT_MS);
    const pipeline = this.#checks.pipeline();
    for (const key of this.keys.all) pipeline.del(key);
    await pipeline.exec().catch(() => undefined);
  }
}
