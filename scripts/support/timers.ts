// The timers of a fault schedule (the soak's and the chaos run's): actions after a delay, none of
// which runs once the schedule is stopped.

export class Timers {
  readonly #pending = new Set<NodeJS.Timeout>();
  #stopped = false;

  /** Runs `action` after `ms`, unless {@link stop} came first. */
  after(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      if (!this.#stopped) action();
    }, ms);
    this.#pending.add(timer);
  }

  /** Cancels every pending action; later ones never run either. */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#pending) clearTimeout(timer);
    this.#pending.clear();
  }
}
