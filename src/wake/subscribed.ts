import { backoffDelay, backoffSettled } from "../backoff";
import { monotonicNow } from "../clock";
import type { AcquirePlan } from "../options";
import type { QueueTicket, Take } from "../store";
import { type Grant, pollUntil, type Step, type Waiter } from "../waiting";
import type { FeedEvent, Listening, LockEvents, Meaning } from "./feed";

/**
 * The last safety poll goes at least this long (ms) before the wait's last try's moment, whatever
 * `retry.delay`: a timer fires a little late on a busy event loop, and one due at that moment sends nothing
 * (review helper-225: with `delay: 0`, a poll 1 ms before it was lost, and with it an unannounced release).
 */
const LAST_POLL_MARGIN_MS = 20;

/**
 * A wait that its lock's announcements may cut short. It subscribes once that costs no more than polling
 * (at once when a shared subscription is active: free; a fair waiter at its first refusal), then polls only
 * as a safety net (a 0.2 holder's release is not announced): every `retry.maxDelay`, and once `retry.delay`
 * (20 ms at least) before its last try's moment, never sooner than polling would. Without `events` (no
 * wake-ups on the client) it only polls. An unfair waiter retries at the first release it hears; once it
 * heard the lock change hands, within the retry window (the releaser may retake it, others heard it too).
 */
export class SubscribedWaiter implements Waiter {
  readonly #events: LockEvents | undefined;
  protected readonly plan: AcquirePlan;
  readonly #fair: boolean;
  readonly #setup = new AbortController();
  #listening: Listening | undefined;
  #mayAsk = true; // for a subscription: until one is asked for; again once one that paid broke, not once it failed
  #pending: Meaning = "ignore"; // asked for since the last try, kept for a wait not yet started
  #wake: ((meaning: Meaning) => void) | undefined;
  #grant: FeedEvent | undefined;
  #sentAt = 0; // the current try's
  #fastest = Number.POSITIVE_INFINITY; // the quickest refusal's round trip
  #windowEnd: number | undefined; // when the schedule's last try falls, fixed at the first refusal
  #turnedOver = false; // heard the lock taken
  #freed = 0; // releases heard since the last try
  #asked = 0; // subscriptions asked for: only the newest one's events and answer count
  #breaks = 0; // subscriptions of this wait that broke once active
  #quickBreaks = 0; // of those, after the first, the ones too young to have paid for themselves
  #askAfter = Number.POSITIVE_INFINITY; // after a quick break: when a subscription may be asked for again
  #kind: Step["kind"] | undefined; // what the current try found, once told (`next`)
  #due = 0; // when the wait in progress ends as planned: an uncovered try's next poll
  #early = 0; // the planned moment of a covering poll sent early (at activation), for the next `next`
  #tries = 1; // tries so far, as the last `next` was told: how far apart polling's polls have grown

  constructor(events: LockEvents | undefined, plan: AcquirePlan, fair = false) {
    this.#events = events;
    this.plan = plan;
    this.#fair = fair;
    if (events?.active()) this.#subscribe();
  }

  trying(_lastTry: boolean): QueueTicket | undefined {
    if (this.#pending !== "grant") this.#pending = "ignore";
    this.#freed = 0;
    this.#sentAt = monotonicNow();
    return undefined;
  }

  answered(take: Take | undefined): boolean {
    if (take?.kind === "held") this.#fastest = Math.min(this.#fastest, monotonicNow() - this.#sentAt);
    return true;
  }

  next(step: Step): { at: number; spent: number } | undefined {
    const { kind, now, planned, cap } = step;
    this.#kind = kind;
    this.#tries = step.tries;
    const early = this.#early; // this try was a covering poll sent before its planned moment
    this.#early = 0;
    if (kind !== "error" && this.#windowEnd === undefined) this.#windowEnd = now + this.#schedule();
    const windowEnd = this.#windowEnd ?? Number.POSITIVE_INFINITY;
    if (kind === "held" && this.#covered() && now >= windowEnd) return undefined;
    const cost = this.#events?.cost() ?? 0;
    const pays = kind === "held" && this.#pays(step, Math.min(windowEnd, cap) - now, cost);
    if (pays) this.#subscribe();
    const end = Math.min(windowEnd, step.lastTryAt);
    // Never sooner than polling would (a covered wait's last attempt still comes at its schedule's end), but a
    // poll planned for the last try's moment is none: no try goes then.
    const floor = planned < step.lastTryAt ? planned : 0;
    // A try that erred tells nothing of the lock (the release that woke it may be spent): it polls on. A
    // covering poll sent early leaves the safety polls where they were, counted from its planned moment;
    // a fair waiter's from the poll itself, as its place in line lives only `maxDelay` + 2 s after a try.
    // A held try the subscription became active during is covered by the next poll, sent at once: a release
    // before the activation was not heard.
    let at = planned;
    const from = this.#fair ? this.#sentAt : Math.max(this.#sentAt, early);
    if (kind !== "error" && this.#covered())
      at = Math.min(Math.max(this.#safetyPoll(from, end), floor), cap, windowEnd);
    else if (kind === "held" && this.#listening !== undefined) {
      this.#early = planned;
      at = now;
    }
    this.#due = at;
    return { at, spent: pays ? cost : 0 };
  }

  /**
   * Once a try is covered, a release is announced: only safety polls are left, for a release nobody announces
   * (0.2's). The next after one at `at`: `maxDelay` later, but no later than `retry.delay` (20 ms at least)
   * before `end` (the last try's moment), nor sooner than that after `at`. So such a release is
   * found within `maxDelay` of it, or by the last poll, just before the wait ends; a wait shorter than
   * `maxDelay` sends that one. Sparse: polling's rate would bill more (a fair waiter subscribes whatever the
   * cost), and polls closing in on the end found little more for a poll each (review helper-221).
   */
  #safetyPoll(at: number, end: number): number {
    const { delay, maxDelay } = this.plan.backoff;
    const margin = Math.max(delay, LAST_POLL_MARGIN_MS); // a late timer still sends it before `end`
    return at + Math.min(maxDelay, Math.max(margin, end - margin - at));
  }

  /** Waits as polling would; a release wakes it at once, or within 1-4 round trips of it ("soon"). */
  async wait(
    until: number,
    signal: AbortSignal | undefined,
    local: Promise<unknown> | undefined,
  ): Promise<Grant | undefined> {
    const roundTrip = Math.min(this.#fastest, this.plan.backoff.delay);
    const spread = Math.min(3 * roundTrip, this.plan.backoff.delay);
    try {
      await pollUntil(until, signal, local, (finish, moveTo) => {
        this.#wake = (meaning) => {
          if (meaning === "now" || meaning === "grant") finish();
          else if (meaning === "soon")
            moveTo(Math.min(until, monotonicNow() + roundTrip + Math.random() * spread));
          else if (meaning === "cancel") moveTo(until);
        };
        if (this.#pending !== "ignore") this.#wake(this.#pending);
      });
    } finally {
      this.#wake = undefined;
    }
    return undefined;
  }

  /** The announcement that handed the lock to this (fair) waiter, if one came; once. */
  protected takeGrant(): FeedEvent | undefined {
    const grant = this.#grant;
    this.#grant = undefined;
    if (this.#pending === "grant") this.#pending = "ignore";
    return grant;
  }

  close(_abandoned?: Promise<unknown>): void {
    this.#setup.abort();
    this.#listening?.stop();
    this.#listening = undefined;
  }

  /** Milliseconds from the first refusal to the schedule's last try (all attempts and their round trips). */
  #schedule(): number {
    const { attempts, backoff } = this.plan;
    if (attempts === Number.POSITIVE_INFINITY) return attempts;
    let total = 0;
    for (let attempt = 1; attempt < attempts; attempt++) {
      const wait = backoffDelay(attempt, backoff, 0) + this.#roundTrip();
      if (backoffSettled(attempt, backoff)) return total + wait * (attempts - attempt); // the rest are alike
      total += wait;
    }
    return total;
  }

  /** The quickest refusal's round trip, ms (0 before one): polls are this much further apart than their waits. */
  #roundTrip(): number {
    return Number.isFinite(this.#fastest) ? this.#fastest : 0;
  }

  /**
   * Whether subscribing costs no more than polling until the wait ends (last try, timeout, lease) within `span`
   * ms: its SUBSCRIBE (none to join one), the covering poll (for moments before it was active), its safety polls
   * and the try after the wake-up. What else `cost` counts (over TCP, a new connection's handshake, shared by
   * every wait while it is open) must fit the attempts left, but is not held against this one wait. A fair
   * waiter subscribes at once: only the release handing it the lock wakes it.
   */
  #pays({ tries, spent, now }: Step, span: number, cost: number): boolean {
    const left = this.plan.attempts - spent;
    if (!this.#events || !(this.#mayAsk || now >= this.#askAfter) || left < cost + 1) return false;
    if (this.#fair || span === Number.POSITIVE_INFINITY) return true;
    const subscribed = Math.min(cost, 1) + 2 + this.#safetyPolls(tries, span);
    return span > 0 && this.#polls(tries, span, left) >= subscribed;
  }

  /**
   * How many polls plain polling sends within `span` ms from now (a reply), at most `left`: the first a wait
   * after it, each next a round trip and a wait after the last; summed once waits settle.
   */
  #polls(tries: number, span: number, left: number): number {
    const { backoff } = this.plan;
    let polls = 0;
    for (let elapsed = 0; polls < left; polls++) {
      const wait = backoffDelay(tries + polls, backoff, 0);
      if (elapsed + wait >= span) return polls;
      const apart = Math.max(1, wait + this.#roundTrip());
      if (backoffSettled(tries + polls, backoff))
        return Math.min(left, polls + Math.ceil((span - elapsed - wait) / apart));
      elapsed += apart;
    }
    return polls;
  }

  /** How many safety polls a wait covered from its next poll sends before it ends, `span` ms from now. */
  #safetyPolls(tries: number, span: number): number {
    const { backoff } = this.plan;
    const covering = Math.max(1, backoffDelay(tries, backoff, 0));
    // maxDelay apart while far from the end (counted, not walked: a long wait costs nothing up front)...
    const far = Math.max(0, Math.floor((span - 2 * backoff.maxDelay - covering) / backoff.maxDelay));
    let polls = far;
    // ...then the last two or three, walked. The cap ends a walk whose steps fall below the float spacing of
    // its moments (spans near 2^53 ms), which would never advance.
    let at = this.#safetyPoll(covering + far * backoff.maxDelay, span);
    for (let walked = 0; at < span && walked < 64; walked++, at = this.#safetyPoll(at, span)) polls++;
    return polls;
  }

  /** Whether an active subscription covered the current try: a later release is announced. */
  #covered(): boolean {
    return this.#listening !== undefined && this.#listening.since <= this.#sentAt;
  }

  #subscribe(): void {
    this.#mayAsk = false;
    this.#askAfter = Number.POSITIVE_INFINITY;
    const asked = ++this.#asked;
    void this.#events
      ?.listen((event) => asked === this.#asked && this.#heard(event), this.#setup.signal)
      .then((listening) => {
        // Stale (it broke before it answered, and a newer one was asked) or unwanted: let it go.
        if (this.#setup.signal.aborted || asked !== this.#asked) listening?.stop();
        else if (listening) {
          this.#listening = listening;
          // A wait in progress after a held try it does not cover: the covering poll goes now, not at the
          // next planned poll (a release before the activation was not heard). At once, even if the lock
          // changed hands: it is no retry others heard of. It is the poll this wait would send next, except
          // when the next planned moment is the last try's (none goes then): one more try, within attempts.
          if (this.#wake && this.#kind === "held" && !this.#covered()) {
            this.#early = this.#due;
            this.#wake("now");
          }
        } else this.#mayAsk = false; // failed (even if it broke first): this wait polls on
      });
  }

  /** Takes in an announcement: a wait in progress acts on what it asks; otherwise that is kept. */
  #heard(event: FeedEvent): void {
    if (event === "ended") {
      const broken = this.#listening; // broke: announcements meanwhile are lost; retry soon, uncovered
      this.#listening = undefined;
      this.#asked += 1; // its answer, if still to come, is a dead subscription's
      // Again at once after a first break, or one that lived to save the two commands a new one costs (itself,
      // its covering poll): three of polling's current waits (`delay` as grown by the backoff, up to
      // `maxDelay`), two for those commands and one as a margin. After a quicker one, not for retry.maxDelay,
      // doubling with each: a stream that keeps breaking would bill more than polling. One that broke
      // unconfirmed failed: this wait polls on.
      const now = monotonicNow();
      const apart = backoffDelay(this.#tries, this.plan.backoff, 0);
      const paid = broken !== undefined && now - broken.since >= 3 * apart;
      const again = broken !== undefined && (this.#breaks++ === 0 || paid);
      this.#mayAsk = again;
      if (broken && !again) this.#askAfter = now + this.plan.backoff.maxDelay * 2 ** this.#quickBreaks++;
      broken?.stop();
    }
    const meaning = event === "ended" ? "soon" : this.meaning(event);
    if (meaning === "grant") this.#grant = event;
    if (meaning === "ignore") return;
    if (this.#pending !== "grant" && (meaning !== "soon" || this.#pending !== "now")) this.#pending = meaning;
    this.#wake?.(meaning);
  }

  /**
   * What an announcement asks of this wait. A release wakes at once until the wait hears someone take the
   * lock; then only within the retry window. An acquisition cancels the wake once it took the last permit a
   * release heard since the last try freed (a semaphore's releases add up), unless it says permits are left.
   */
  protected meaning(event: FeedEvent): Meaning {
    if (event === "released") {
      this.#freed += 1;
      return this.#turnedOver ? "soon" : "now";
    }
    this.#turnedOver = true;
    // Permits are left free (freed unannounced, or by releases heard): a retry a release asked for may get
    // one. Not "soon" of itself: a Lock's waiter hears a Semaphore of the same id on the same channel.
    if (event.startsWith("acquired:")) {
      this.#freed = Math.max(0, this.#freed - 1);
      return "ignore";
    }
    if (this.#freed > 1) {
      this.#freed -= 1;
      return "ignore";
    }
    this.#freed = 0;
    return "cancel";
  }
}
