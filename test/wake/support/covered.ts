import { feedFor } from "../../../src/wake/feeds";
import { now, pause, waitUntil } from "../../faults/support/time";

/**
 * How long a wait's tries must have stood still before it counts as covered. It catches a try whose wait began
 * just before the activation while its script went just after (sent while active, yet uncovered): its answer
 * is followed by the covering poll at once, well within this.
 */
const QUIET_MS = 300;

/**
 * A plain timer a wake-up must beat: due well before any safety poll the tests using it schedule (20 s or
 * more after the covering try), and many times a wake-up's few round trips even on a loaded machine. Only
 * there to tell a wake-up from a poll, not a bound on speed.
 */
export const WOKEN_BEFORE_MS = 5_000;

interface Try {
  readonly whileActive: boolean; // the client's subscription to the channel was active when it was sent
  answeredAt: number | undefined;
}

/** The tries of the waits on `client`, watched until `stop`. */
export interface TryWatch {
  /** How many tries were sent so far: a mark for {@link covered}. */
  sent(): number;
  /**
   * Resolves once the waits on the client are covered: its latest try, one sent after the first `after` (a try of
   * the wait that matters now, not one from before), went while its subscription to the channel was active (the
   * covering poll, which finds a release from before the activation), was answered, and no try followed for
   * a while. From then on, only a safety poll (far off) or a wake-up sends another.
   */
  covered(what: string, after?: number): Promise<void>;
  /** Ends the watch: ioredis's methods are put back; a middleware stays, passing requests on. */
  stop(): void;
}

type Send = (...args: unknown[]) => Promise<unknown>;
type Middleware = (
  request: { body?: unknown },
  next: (request: unknown) => Promise<unknown>,
) => Promise<unknown>;

/**
 * Watches the scripts `client` sends (every try: EVAL or EVALSHA), noting whether its feed's subscription to
 * `channel` was active at each. Tries of every wait on the client count, as do the scripts of holders on it:
 * release them after `stop`. An `@upstash/redis` client is watched through a middleware on its requests (its
 * auto-pipelining proxy calls no `eval` of the instance); ioredis through its methods, looked up at each call.
 */
export function watchTries(client: object, channel: string): TryWatch {
  const tries: Try[] = [];
  let watching = true;
  const restore: (() => void)[] = [];
  const watched = <T>(send: () => Promise<T>): Promise<T> => {
    const attempt: Try = { whileActive: feedFor(client)?.active(channel) === true, answeredAt: undefined };
    tries.push(attempt);
    const reply = send();
    const answered = () => {
      attempt.answeredAt = now();
    };
    reply.then(answered, answered);
    return reply;
  };
  const upstash = client as { use?: (middleware: Middleware) => void };
  if (typeof upstash.use === "function") {
    upstash.use((request, next) =>
      watching && /"eval(sha)?"/i.test(JSON.stringify(request.body ?? null))
        ? watched(() => next(request))
        : next(request),
    );
  } else {
    const methods = client as Record<"eval" | "evalsha", Send>;
    for (const name of ["eval", "evalsha"] as const) {
      const own = Object.getOwnPropertyDescriptor(client, name);
      const send = methods[name];
      methods[name] = (...args: unknown[]) =>
        watching ? watched(() => send.apply(client, args)) : send.apply(client, args);
      restore.push(() => {
        if (own) Object.defineProperty(client, name, own);
        else delete methods[name];
      });
    }
  }
  return {
    sent: () => tries.length,
    covered: (what, after = 0) =>
      waitUntil(
        () => {
          const last = tries.at(-1);
          return (
            tries.length > after &&
            last?.whileActive === true &&
            last.answeredAt !== undefined &&
            now() - last.answeredAt >= QUIET_MS
          );
        },
        what,
        { timeoutMs: 10_000 },
      ),
    stop: () => {
      watching = false;
      for (const put of restore) put();
    },
  };
}

/**
 * Which comes first once a release was sent: `acquiring` settling, or a plain timer of `WOKEN_BEFORE_MS`
 * started with it (both late alike on a loaded machine). "acquired" only when it took the lock.
 */
export async function firstAfterRelease(
  acquiring: Promise<unknown>,
): Promise<"acquired" | "failed" | "timer first"> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      acquiring.then(
        (taken) => (taken === false || taken === undefined ? "failed" : "acquired"),
        () => "failed" as const,
      ),
      pause(WOKEN_BEFORE_MS, "timer first" as const, { signal: timer.signal }),
    ]);
  } finally {
    timer.abort();
  }
}
