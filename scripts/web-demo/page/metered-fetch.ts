// Counts what the page's Redis clients send, by wrapping `fetch`: every request of @upstash/redis and
// every wake-up stream of the lock goes through it. It also lets the page hold one client's requests
// back, which is how a worker is frozen or killed.

/** What one client (or group of requests) sent, and whether its requests may leave the page. */
export class Meter {
  /** Commands sent: a `/pipeline` or `/multi-exec` body holds several, a subscription is one. */
  commands = 0;
  requests = 0;
  subscriptions = 0;
  /**
   * The client's identity on the wire: @upstash/redis hands its `signal` option to every fetch it
   * makes (retries included), and this one never aborts, so it changes nothing else.
   */
  readonly signal = new AbortController().signal;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  /** Requests wait here from now on, as a stalled process's would, until {@link Meter.thaw}. */
  hold(): void {
    this.#gate ??= new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  /** Lets the held requests go, late, and the next ones at once. */
  thaw(): void {
    this.#open?.();
    this.#gate = undefined;
    this.#open = undefined;
  }

  /** Resolves when a request may leave: at once, or when the meter thaws (never, for a dead worker). */
  get gate(): Promise<void> | undefined {
    return this.#gate;
  }
}

const metersBySignal = new WeakMap<AbortSignal, Meter>();

/** Requests no meter claims: the lock's wake-up streams, which it opens with a signal of its own. */
export const unclaimed = new Meter();

/** The meter a client made with `new Redis({ ..., signal: meter.signal })` reports to. */
export function newMeter(): Meter {
  const meter = new Meter();
  metersBySignal.set(meter.signal, meter);
  return meter;
}

function commandsIn(path: string, body: unknown): number {
  if (!/\/(pipeline|multi-exec)$/.test(path) || typeof body !== "string") return 1;
  try {
    const commands: unknown = JSON.parse(body);
    return Array.isArray(commands) ? commands.length : 1;
  } catch {
    return 1;
  }
}

/** Replaces `window.fetch` with the counting one; call once, before any client is made. */
export function installMeteredFetch(): void {
  const send = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const meter = (init?.signal && metersBySignal.get(init.signal)) || unclaimed;
    if (meter.gate) await meter.gate;
    const url = new URL(input instanceof Request ? input.url : String(input));
    meter.requests += 1;
    if (/^\/p?subscribe\//.test(url.pathname)) meter.subscriptions += 1;
    meter.commands += commandsIn(url.pathname, init?.body);
    return send(input, init);
  };
}
