import { clockDriftAllowance, monotonicNow } from "../clock";
import { newCallId } from "../ids";
import { type AcquirePlan, QUEUE_GRACE_MS } from "../options";
import type { QueueTicket, Take } from "../store";
import type { Grant } from "../waiting";
import type { FeedEvent, LockEvents, Meaning } from "../wake/feed";
import { SubscribedWaiter } from "../wake/subscribed";

/**
 * A fair waiter's wait. Its name in line, `<id>:<grant ms>:<token>`, is unique per acquisition (nothing for an
 * earlier stay of the token, a late leave or grant, touches this one) and tells a release how long to grant.
 * Each try renews its entry, which lives its longest wait between tries plus {@link QUEUE_GRACE_MS}. Woken
 * by `events` (if any) when a release hands it the lock, it then holds with no request (unless fencing,
 * whose token only a try issues). Leaving, it gives its place up (`leave`, in the `background`), also after
 * a try left behind, which may have queued it.
 */
export class FairWaiter extends SubscribedWaiter {
  member: string; // fresh once a release buried it (`answered`)
  /** The line may hold an entry of this waiter, which it must leave when it stops waiting. */
  queued = false;
  readonly #standIn: number; // ms an entry, or a grant, outlives the waiter's last try
  #id: string; // names the hold a grant gives it, on the permit's list
  #named: string; // grants name its id (no token): known at once, one may beat the reply
  readonly #token: string;
  readonly #leave: () => void;
  readonly #leaveAs: (member: string) => void;
  readonly #background: (work: Promise<unknown>) => void;
  #lastTry = false;
  #sentAt = 0;
  #refusedAt: number | undefined; // send time of the last refused try: it ran before any later release
  #place = 0; // in line, as the last refused try found it
  #ahead: number | undefined;
  #clock = 0; // the last `now` sent (`#now`)

  constructor(
    token: string,
    plan: AcquirePlan,
    events: LockEvents | undefined,
    leave: (member: string, stayMs: number, now: number) => Promise<void>,
    background: (work: Promise<unknown>) => void,
  ) {
    super(events, plan, true);
    this.#token = token;
    this.#standIn = Math.ceil(plan.backoff.maxDelay) + QUEUE_GRACE_MS;
    [this.member, this.#id, this.#named] = this.#name();
    this.#leaveAs = (member) => background(leave(member, this.#standIn, this.#now()));
    this.#leave = () => this.#leaveAs(this.member);
    this.#background = background;
  }

  /**
   * A fresh name in line. A grant lasts as its entry would: a waiter that learns of it by polling (no wake-ups,
   * or one missed) polls up to `maxDelay` apart. Capped at a shorter lease, it ran out between polls, and the
   * next in line went first (review helper-171).
   */
  #name(): [member: string, id: string, named: string] {
    const id = newCallId();
    return [`${id}:${this.#standIn}:${this.#token}`, id, `granted:${id}:`];
  }

  override trying(lastTry: boolean): QueueTicket {
    super.trying(lastTry);
    this.#sentAt = monotonicNow();
    this.#lastTry = lastTry;
    return { member: this.member, now: this.#now(), entryMs: this.#standIn, lastTry };
  }

  /**
   * The wall clock for a try or the leave, strictly later than the last sent, though the clock stepped back or
   * two went in one millisecond: the line takes a try sent no later than its leave, or than the try that took
   * a permit, for a late copy (`takePermit`), so a later one must say it is later.
   */
  #now(): number {
    this.#clock = Math.max(Date.now(), this.#clock + 1);
    return this.#clock;
  }

  override answered(take: Take | undefined): boolean {
    super.answered(take);
    this.queued = take === undefined || (take.kind === "held" && !this.#lastTry);
    if (take?.kind !== "held") return true;
    if (take.place === -1) {
      // Its name is spent: a release handed it the permit, which a same-uuid acquisition confirmed and released
      // (burying the name, so that its tries' late copies take nothing). It was in line no more: it goes on as
      // a new waiter (review helper-201). It leaves under the spent name too, as it would have at its end: that
      // name's tries, sent before, confirm no newer hold of its token either (only their own). The try counts
      // for none: the fresh name tries at once, its last try too (review helper-206). Each rename takes a new
      // burial, of a name a release handed a permit.
      const spent = this.member;
      [this.member, this.#id, this.#named] = this.#name();
      this.#leaveAs(spent);
      this.takeGrant(); // one announced to the spent name, come before this answer, is for it no more
      this.#ahead = this.#refusedAt = undefined;
      this.#place = 0;
      return false;
    }
    this.#ahead = take.ahead;
    this.#place = take.place ?? 0;
    this.#refusedAt = this.#sentAt;
    return true;
  }

  override async wait(until: number, signal: AbortSignal | undefined, local: Promise<unknown> | undefined) {
    await super.wait(until, signal, local);
    const grant = this.takeGrant();
    return grant && !this.plan.fencing ? this.granted(grant) : undefined;
  }

  override close(abandoned: Promise<unknown> | undefined): void {
    super.close();
    // Again once a try left behind settled: that try may land after the first leave and queue the waiter
    // again (when no deadline of it was kept to refuse it), and the first leave may have failed.
    if (this.queued) this.#leave();
    if (abandoned) this.#background(abandoned.then(this.#leave));
  }

  /**
   * A grant to this waiter wakes it at once. So does an unfair release (0.2's, a plain Lock's, or one that
   * found fewer waiters than free permits) when it is first in line; further back, it tries within the
   * retry window: the waiters ahead may have left the line, which announces nothing.
   */
  override meaning(event: FeedEvent): Meaning {
    if (event === "released") return this.#ahead === 0 ? "now" : "soon";
    return event.startsWith(this.#named) ? "grant" : "ignore";
  }

  /**
   * The hold a release's grant gave this waiter, from its last refused try, which Redis ran before the release
   * (a later one would have got the lock): the deadline can only be early. Undefined unless the grant names
   * that try's place (a late one may be for an earlier stay) and leaves at least half itself.
   */
  granted(event: FeedEvent): Grant | undefined {
    const [, , at, ms, permit] = event.split(":").map(Number);
    const refusedAt = this.#refusedAt;
    if (refusedAt === undefined || at !== this.#place || !ms) return undefined;
    if (refusedAt + ms - clockDriftAllowance(ms) - monotonicNow() < ms / 2) return undefined;
    this.queued = false;
    return { sentAt: refusedAt, pttl: ms, permit: permit || 1, hold: this.#id };
  }
}
