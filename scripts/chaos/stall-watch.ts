// In a worker: when its event loop did not run. A SIGSTOP, a busy loop or a loaded machine delays
// every timer the library set, so an acquire() that settles late for that reason has not overrun
// its timeout; the overrun check takes the stalled time off first.

const TICK_MS = 10;
/** A tick later than this (beyond its period) counts as a stall. */
const STALL_MS = 25;
/** Stalls older than this are forgotten: no acquire() waits so long. */
const MEMORY_MS = 30_000;

/** A span of monotonic time (performance.now()) during which the event loop did not run. */
interface Stall {
  readonly from: number;
  readonly to: number;
}

export class StallWatch {
  readonly #stalls: Stall[] = [];
  #last = performance.now();
  #seen = 0;
  readonly #timer: NodeJS.Timeout;

  constructor() {
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    // Watching must not keep the worker alive.
    this.#timer.unref();
  }

  /** How many stalls were seen so far. */
  get seen(): number {
    return this.#seen;
  }

  /** Milliseconds of [from, to] (monotonic) during which the event loop was seen stalled. */
  stalledBetween(from: number, to: number): number {
    // The stall that just ended may not have been ticked yet: the caller's continuation can run first.
    const current = this.#current(performance.now());
    let total = 0;
    for (const stall of current ? [...this.#stalls, current] : this.#stalls) {
      total += Math.max(0, Math.min(to, stall.to) - Math.max(from, stall.from));
    }
    return total;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #current(now: number): Stall | undefined {
    return now - this.#last > TICK_MS + STALL_MS ? { from: this.#last + TICK_MS, to: now } : undefined;
  }

  #tick(): void {
    const now = performance.now();
    const stall = this.#current(now);
    if (stall) {
      this.#stalls.push(stall);
      this.#seen += 1;
    }
    this.#last = now;
    while ((this.#stalls[0]?.to ?? now) < now - MEMORY_MS) this.#stalls.shift();
  }
}
