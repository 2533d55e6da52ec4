import { backoffDelay } from "./backoff";
import { clockDriftAllowance, monotonicNow } from "./clock";
import type { AcquisitionFailureReason, InstanceFailure, LockRedisError } from "./errors";
import { type AcquirePlan, QUEUE_GRACE_MS } from "./options";
import { raceAbort, TIMED_OUT, within } from "./race";
import { sha1Hex } from "./sha1";
import type { AttemptResult, LockStore, QueueTicket } from "./store/lock-store";
import { Doorbell, type EventMeaning, type RetryWindow, unqueuedMeaning } from "./wake/doorbell";
import { EventWatch } from "./wake/event-watch";
import type { FeedEvent, LockEvent } from "./wake/feed-types";
import { grantOf } from "./wake/lock-events";

/** How one acquisition ended. */
export type AcquireOutcome =
  | {
      readonly acquired: true;
      readonly attempts: number;
      readonly elapsedMs: number;
      /** Monotonic time the winning request was sent: the hold's deadline counts from it. */
      readonly sentAt: number;
      /** The lease Redis set, in milliseconds, as of `sentAt`: the plan's, or a shorter grant. */
      readonly pttl: number;
      readonly fencingToken: number | undefined;
    }
  | {
      readonly acquired: false;
      readonly attempts: number;
      readonly elapsedMs: number;
      readonly reason: AcquisitionFailureReason;
      /** Set when the last attempt could not reach Redis. */
      readonly error?: LockRedisError | undefined;
      /** With a quorum: instances that failed during the last attempt. */
      readonly instances?: readonly InstanceFailure[] | undefined;
    };

/** What an acquisition needs from its lock. */
export interface AcquisitionContext {
  readonly store: LockStore;
  /**
   * Releases `token`, which a request may have taken while nobody waits for its answer any more.
   * `lease` is the acquisition's, which bounds how long a quorum waits for one instance. Resolves
   * when done, never rejects; the lock decides whether the token is its own to drop.
   */
  readonly cleanUp: (token: string, lease: number) => Promise<void>;
  /**
   * Takes `token` out of a fair line, handing on a permit a release gave it meanwhile unless the
   * lock holds that token. Never rejects.
   */
  readonly leaveQueue: (token: string) => Promise<void>;
  /** Hands work that outlives the call to the platform (see `waitUntil`). */
  readonly background: (work: Promise<unknown>) => void;
  /**
   * Shared by the lock's acquisitions: until when (monotonic ms) waits should not subscribe, set
   * when a wait found the lock changing hands faster than it polls.
   */
  readonly busy: { until: number };
}

/** After a wait found the lock busy, later waits poll without subscribing for this many `maxDelay`s. */
const BUSY_MEMORY_IN_MAX_DELAYS = 10;

/**
 * A wait subscribes only once this many tries in a row found the same holder: a lock that one
 * holder keeps across polls is likely to stay held a while, which is where a subscription saves
 * polls. A lock that changes hands between polls is found free by polling as well, and there each
 * announcement (one per release and per acquisition) would wake every waiter for nothing.
 */
const SUBSCRIBE_AFTER_SAME_HOLDER = 3;

/**
 * How far ahead a waiter compares polling with subscribing, in multiples of `retry.maxDelay`, when
 * nothing else (attempts, timeout, the holder's lease) ends its wait sooner.
 */
const LOOKAHEAD_IN_MAX_DELAYS = 4;

/**
 * One call of acquire: tries, waits between tries, and the decision to subscribe to the lock's
 * announcements. Every request counts against `attempts`, a subscription included, so a wait never
 * costs more commands than polling on the same schedule; `timeout` bounds the whole call, requests
 * in flight included.
 */
export class Acquisition {
  readonly #context: AcquisitionContext;
  readonly #plan: AcquirePlan;
  readonly #token: string;
  readonly #started = monotonicNow();
  readonly #budgetEnd: number;
  /** Tries sent. */
  #tries = 0;
  /** Requests of the attempt budget spent: tries, plus the subscription if any. */
  #spent = 0;
  /** When the last try of the schedule falls, fixed at the first failure; Infinity without a count. */
  #windowEnd = Number.POSITIVE_INFINITY;
  #fastestRoundTrip = Number.POSITIVE_INFINITY;
  #bell: Doorbell | undefined;
  #watch: EventWatch | undefined;
  /** The last try that did not take the lock: what it found, when it was sent and answered (monotonic ms). */
  #lastTry: { result: Exclude<AttemptResult, { kind: "acquired" }>; sentAt: number; now: number } | undefined;
  /** Set once a subscription was dropped: this wait does not subscribe again. */
  #dropped = false;
  /** Send time of the last try Redis answered "held" (ran before any release after it). */
  #lastRefusalSentAt: number | undefined;
  /** In a fair line: how many waiters the last try found ahead. */
  #ahead: number | undefined;
  /** In a fair line: the place the last try found this waiter at, which a grant to it names. */
  #place: number | undefined;
  /** The SHA-1 of the token, by which a fair release names the waiter it hands the lock to. */
  #tokenHash: string | undefined;
  /** Whether the queue may still hold an entry of this waiter (a try queued it, and none took it out). */
  #queued = false;
  /** The fingerprint of the holder the last try found, and how many tries in a row found it. */
  #holder: number | undefined;
  #sameHolder = 0;

  constructor(context: AcquisitionContext, plan: AcquirePlan, token: string) {
    this.#context = context;
    this.#plan = plan;
    this.#token = token;
    this.#budgetEnd = plan.timeout === undefined ? Number.POSITIVE_INFINITY : this.#started + plan.timeout;
  }

  /** Runs the acquisition to its end. Rejects only with the signal's reason. */
  async run(): Promise<AcquireOutcome> {
    if (this.#context.store.fair) this.#tokenHash = sha1Hex(this.#token);
    try {
      return await this.#tryUntilDone();
    } finally {
      this.#watch?.close();
      // A waiter that stops waiting gives its place up, rather than hold the line until it expires.
      if (this.#queued) this.#context.background(this.#context.leaveQueue(this.#token));
    }
  }

  async #tryUntilDone(): Promise<AcquireOutcome> {
    let previous: AttemptResult | undefined;
    for (;;) {
      this.#tries += 1;
      this.#spent += 1;
      this.#bell?.reset();
      const sentAt = monotonicNow();
      const result = await this.#tryOnce();
      const now = monotonicNow();
      if (result === TIMED_OUT) {
        // The request in flight is abandoned (and cleaned up after if it took the lock); what is
        // known is the try before it, which may have failed to reach Redis.
        if (previous?.kind !== "error") return this.#failed("timeout");
        return this.#failed("redis-error", { error: previous.error, instances: previous.error.instances });
      }
      previous = result;
      if (result.kind === "acquired") {
        return {
          acquired: true,
          attempts: this.#tries,
          elapsedMs: now - this.#started,
          sentAt,
          pttl: this.#plan.lease,
          fencingToken: result.fencingToken,
        };
      }
      if (result.kind === "held") this.#lastRefusalSentAt = sentAt;
      this.#fastestRoundTrip = Math.min(this.#fastestRoundTrip, now - sentAt);
      if (this.#tries === 1) this.#windowEnd = now + this.#scheduleSpan();
      // A try sent later than a round trip before the budget ends could not be answered in time.
      const outOfTime = now >= this.#lastTryAt();
      if (this.#spent >= this.#plan.attempts || outOfTime || (this.#watch && now >= this.#windowEnd)) {
        return this.#giveUp(result, outOfTime ? "timeout" : "held");
      }
      this.#lastTry = { result, sentAt, now };
      if (this.#context.store.fair) {
        if (result.kind === "held") this.#maybeSubscribeInLine();
      } else {
        this.#dropSubscriptionIfBusy(now);
        if (result.kind === "held") {
          this.#noteHolder(result.holder);
          this.#maybeSubscribe(result.pttl, now);
        }
      }
      const wait = this.#nextTryAt(result, sentAt, now) - now;
      this.#bell ??= this.#newDoorbell();
      try {
        await this.#bell.wait(Math.max(0, wait), this.#plan.signal, this.#retryWindow());
      } catch (reason) {
        if (result.kind === "error")
          this.#context.background(this.#context.cleanUp(this.#token, this.#plan.lease));
        throw reason;
      }
      const granted = this.#granted();
      if (granted) return granted;
    }
  }

  /**
   * One acquire round, bounded by what is left of the timeout and abandoned if the signal aborts.
   * An abandoned round that took (or may have taken) the lock is released in the background.
   */
  #tryOnce(): Promise<AttemptResult | typeof TIMED_OUT> {
    const { store, cleanUp, background } = this.#context;
    const plan = this.#plan;
    // A try that answers after nobody waits for it: what it took is released, and a place it took in
    // a fair queue is given up.
    const releaseIfTaken = (late: Promise<AttemptResult | typeof TIMED_OUT>) => {
      background(
        late.then(
          (result) => {
            if (result === TIMED_OUT) return undefined;
            if (result.kind !== "held") return cleanUp(this.#token, this.#plan.lease);
            return store.fair ? this.#context.leaveQueue(this.#token) : undefined;
          },
          () => cleanUp(this.#token, this.#plan.lease),
        ),
      );
    };
    const ticket = this.#ticket();
    const attempt = store.attempt(this.#token, plan.lease, plan.fencing, ticket).then((result) => {
      this.#notePlace(result, ticket);
      return result;
    });
    const bounded = within(attempt, this.#budgetEnd - monotonicNow(), releaseIfTaken);
    return raceAbort(bounded, plan.signal, releaseIfTaken);
  }

  /**
   * A fair releaser handed the lock to this waiter: it holds for the grant, counted from its last
   * refused try, which Redis ran before the release (a later one would have found the lock its
   * own), so the deadline can only be early. The grant must name the place that try found: one
   * read late may be for an earlier stay in line (this waiter, or an earlier acquire with the same
   * token, took that permit by a try and queued again), and trusting it would make two holders.
   * Fencing needs a try of its own, which issues the token; so does a grant that arrived too late
   * to leave half of itself, or names another stay: the next try finds out.
   */
  #granted(): AcquireOutcome | undefined {
    const event = this.#bell?.takeGrant();
    const grant = event === undefined ? undefined : grantOf(event as LockEvent);
    if (grant === undefined || grant.place !== this.#place) return undefined;
    const { ms } = grant;
    if (this.#plan.fencing || this.#lastRefusalSentAt === undefined) return undefined;
    // A grant that came late (a slow stream, a busy process) leaves too little of itself to trust:
    // a try confirms it instead, and restarts the lease.
    const left = this.#lastRefusalSentAt + ms - clockDriftAllowance(ms) - monotonicNow();
    if (left < ms / 2) return undefined;
    this.#queued = false;
    return {
      acquired: true,
      attempts: this.#tries,
      elapsedMs: monotonicNow() - this.#started,
      sentAt: this.#lastRefusalSentAt,
      pttl: ms,
      fencingToken: undefined,
    };
  }

  /** Counts the tries in a row that found the same holder (an unknown holder breaks the run). */
  #noteHolder(holder: number | undefined): void {
    this.#sameHolder = holder !== undefined && holder === this.#holder ? this.#sameHolder + 1 : 1;
    this.#holder = holder;
  }

  /**
   * What a try of a fair acquisition tells the queue: now on this process's clock, how long its
   * place stays without another try (its longest wait between tries, plus a margin), and whether it
   * is its last try by count, so that the same request takes it out of the line if it fails.
   */
  #ticket(): QueueTicket | undefined {
    if (!this.#context.store.fair) return undefined;
    const { delay, maxDelay } = this.#plan.backoff;
    return {
      now: Date.now(),
      entryTtl: Math.ceil(Math.max(delay, maxDelay)) + QUEUE_GRACE_MS,
      lastTry: this.#spent >= this.#plan.attempts,
    };
  }

  /** Records the waiter's place in a fair queue, as the try's answer gives it. */
  #notePlace(result: AttemptResult, ticket: QueueTicket | undefined): void {
    if (ticket === undefined) return;
    if (result.kind === "held") {
      this.#ahead = result.ahead;
      this.#place = result.place;
      this.#queued = !ticket.lastTry;
    } else if (result.kind === "acquired") {
      this.#queued = false;
    } else {
      // Unknown: the request may have queued it, at a place it does not know.
      this.#place = undefined;
      this.#queued = true;
    }
  }

  /** Milliseconds from the first failure to the last try the schedule allows, at full delays. */
  #scheduleSpan(): number {
    const { attempts, backoff } = this.#plan;
    if (attempts === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
    let span = 0;
    for (let attempt = 1; attempt < attempts; attempt++) span += backoffDelay(attempt, backoff, 0);
    return span;
  }

  /**
   * Subscribes to the lock's announcements, once the same holder kept the lock for a few tries,
   * when that costs fewer requests than polling until the wait can end anyway (the schedule's last
   * try, the timeout, the holder's lease): the subscription, one poll to cover the moments before it
   * was active (none when a lingering subscription replays them), then a safety poll every
   * `maxDelay` (a release by 0.2 is not announced), against a poll every `delay`.
   */
  #maybeSubscribe(holderPttl: number, now: number): void {
    const plan = this.#plan;
    if (this.#sameHolder < SUBSCRIBE_AFTER_SAME_HOLDER || now < this.#context.busy.until) return;
    if (this.#watch || this.#dropped || !plan.wakeOnRelease || !this.#context.store.canListen) return;
    const { maxDelay } = plan.backoff;
    const leaseEnd = holderPttl >= 0 ? now + holderPttl + 1 : Number.POSITIVE_INFINITY;
    const horizon = Math.min(
      this.#windowEnd,
      this.#budgetEnd,
      leaseEnd,
      now + LOOKAHEAD_IN_MAX_DELAYS * maxDelay,
    );
    const span = horizon - now;
    const left = plan.attempts - this.#spent;
    if (span <= 0 || left < 3) return;
    const polls = Math.min(left, this.#pollsUntil(span));
    const subscribed = 2 + Math.ceil(span / maxDelay);
    if (subscribed > polls) return;
    this.#subscribe();
  }

  /**
   * A fair waiter subscribes at once: only its own turn wakes it (not every release), and the
   * release that hands it the lock tells it so, with no request of its own. The subscription
   * counts as one attempt, so it needs two left: itself and a try.
   */
  #maybeSubscribeInLine(): void {
    const plan = this.#plan;
    if (this.#watch || !plan.wakeOnRelease || !this.#context.store.canListen) return;
    if (plan.attempts - this.#spent < 2) return;
    this.#subscribe();
  }

  /**
   * Subscribes, asking an already active subscription to replay what it heard since the last try
   * was sent; once active, a wait in progress is planned anew, since a subscription that covers the
   * last try needs no poll to catch a release the try could not see.
   */
  #subscribe(): void {
    this.#bell ??= this.#newDoorbell();
    const replaySince = this.#lastTry?.sentAt;
    this.#watch = new EventWatch(this.#context.store, this.#bell, replaySince, () => this.#replan());
    this.#spent += 1;
  }

  #replan(): void {
    const last = this.#lastTry;
    if (last === undefined || !this.#watch?.coveredSince(last.sentAt)) return;
    this.#bell?.moveDeadline(this.#nextTryAt(last.result, last.sentAt, last.now));
  }

  /**
   * A doorbell that reads events as this waiter should: in a fair queue, only the announcement of
   * its own turn (or a release while it is first in line) wakes it, at once; otherwise releases wake
   * it within the retry window and acquisitions send it back.
   */
  #newDoorbell(): Doorbell {
    if (!this.#context.store.fair) return new Doorbell(unqueuedMeaning);
    return new Doorbell((event: FeedEvent): EventMeaning => {
      if (event === "ended") return "soon";
      if (event === "acquired") return "ignore";
      // An unfair release (0.2's, or a Lock without `fair`) names no one: the first in line retries.
      if (event === "released") return this.#ahead === 0 ? "now" : "ignore";
      return this.#tokenHash !== undefined && grantOf(event)?.holder === this.#tokenHash
        ? "granted"
        : "ignore";
    });
  }

  /**
   * Ends the subscription when releases come faster than polls: on a lock that busy, polling finds
   * it free as often, and each announcement wakes every waiter for nothing. The lock's next waits
   * then poll too, for a while.
   */
  #dropSubscriptionIfBusy(now: number): void {
    const watch = this.#watch;
    const { delay, maxDelay } = this.#plan.backoff;
    if (!watch?.releasesOutpace(Math.max(1, delay), now)) return;
    watch.close();
    this.#watch = undefined;
    this.#dropped = true;
    this.#context.busy.until = now + BUSY_MEMORY_IN_MAX_DELAYS * maxDelay;
  }

  /** How many tries polling would send within `span` ms, counting the last one at its end. */
  #pollsUntil(span: number): number {
    let elapsed = 0;
    let polls = 0;
    for (let attempt = this.#tries; elapsed < span && polls < 1_000; attempt++) {
      elapsed += Math.max(1, backoffDelay(attempt, this.#plan.backoff, 0));
      polls += 1;
    }
    return polls;
  }

  /**
   * When to try next. Polling: after the backoff, never past the holder's lease nor the last
   * moment a try can still be answered within the timeout.
   * With a subscription that already covered the last try, a release would have been announced:
   * only the holder's lease end, the schedule's last try, the timeout, or the safety poll remain.
   */
  #nextTryAt(result: Exclude<AttemptResult, { kind: "acquired" }>, sentAt: number, now: number): number {
    const pttl = result.kind === "held" ? result.pttl : -1;
    // Redis counted the pttl from some moment between the send and the reply: from the reply (plus
    // a millisecond of rounding), the key has surely expired.
    const leaseEnd = pttl >= 0 ? now + pttl + 1 : Number.POSITIVE_INFINITY;
    if (this.#watch?.coveredSince(sentAt)) {
      return Math.min(leaseEnd, sentAt + this.#plan.backoff.maxDelay, this.#windowEnd, this.#lastTryAt());
    }
    const wait = backoffDelay(this.#tries, this.#plan.backoff);
    return Math.min(now + wait, leaseEnd, this.#lastTryAt());
  }

  /** The latest moment a try can be sent and still be answered before the timeout: a round trip before it. */
  #lastTryAt(): number {
    return this.#budgetEnd - this.#fastestRoundTrip;
  }

  /**
   * When a woken waiter retries: from one round trip after the release (time for a holder that
   * takes the lock straight back to announce it) over three more, so the first retry's success
   * reaches the rest before they send theirs. Never longer than the poll delay.
   */
  #retryWindow(): RetryWindow {
    const roundTrip = Math.min(this.#fastestRoundTrip, this.#plan.backoff.delay);
    return { after: roundTrip, spread: Math.min(3 * roundTrip, this.#plan.backoff.delay) };
  }

  async #giveUp(
    last: Exclude<AttemptResult, { kind: "acquired" }>,
    reason: AcquisitionFailureReason,
  ): Promise<AcquireOutcome> {
    if (last.kind === "held") return this.#failed(reason, { instances: last.failures });
    // The last request may have run with its reply lost: do not leave the key held by a token
    // nobody remembers. Within what is left of the timeout; past it, in the background.
    const cleanUp = this.#context.cleanUp(this.#token, this.#plan.lease);
    await within(cleanUp, this.#budgetEnd - monotonicNow(), (late) => this.#context.background(late));
    return this.#failed("redis-error", { error: last.error, instances: last.error.instances });
  }

  #failed(
    reason: AcquisitionFailureReason,
    details: { error?: LockRedisError; instances?: readonly InstanceFailure[] | undefined } = {},
  ): AcquireOutcome {
    return {
      acquired: false,
      attempts: this.#tries,
      elapsedMs: monotonicNow() - this.#started,
      reason,
      ...details,
    };
  }
}
