import { clockDriftAllowance, monotonicNow } from "../clock";
import { newCallId } from "../ids";
import { type AcquirePlan, QUEUE_GRACE_MS } from "../options";
import type { QueueTicket, Take } from "../store";
import { type Grant, pollUntil, type Waiter } from "../waiting";
import type { FeedEvent, LockEvents, Meaning } from "../wake/feed";

/** One acquisition's seat in a fair line. */
export interface Seat {
  readonly member: string;
  queued: boolean; // the line may hold an entry of this waiter, which it must leave when it stops waiting
  ticket(lastTry: boolean): QueueTicket;
  /** Records what a try found; undefined when it failed (it may have queued the waiter). */
  note(take: Take | undefined, ticket: QueueTicket): void;
  meaning(event: FeedEvent): Meaning;
  /** The hold a grant gives, from the last refused try (monotonic ms); undefined if not to be trusted. */
  granted(event: FeedEvent, refusedAt: number): Grant | undefined;
}

/**
 * A fair waiter's seat in line. Its name, `<id>:<grant ms>:<token>`, is unique per acquisition (nothing for
 * an earlier stay of the token, a late leave or grant, touches this one) and tells a release how long to
 * grant. Its entry's life, and a grant's, is its longest wait between tries plus {@link QUEUE_GRACE_MS}.
 */
export function takeSeat(token: string, plan: AcquirePlan): Seat {
  const standIn = Math.ceil(plan.backoff.maxDelay) + QUEUE_GRACE_MS;
  const id = newCallId();
  const member = `${id}:${Math.min(plan.lease, standIn)}:${token}`;
  const named = `granted:${id}:`; // grants name its id (no token): known at once, one may beat the reply
  let place = 0;
  let ahead: number | undefined;
  return {
    member,
    queued: false,
    ticket: (lastTry: boolean): QueueTicket => ({ member, now: Date.now(), entryMs: standIn, lastTry }),
    note(take: Take | undefined, ticket: QueueTicket) {
      if (take?.kind === "held") {
        ahead = take.ahead;
        place = take.place ?? 0;
        this.queued = !ticket.lastTry;
      } else if (take === undefined) this.queued = true;
      else this.queued = false;
    },
    // A grant to this waiter wakes it at once. So does an unfair release (0.2's, a plain Lock's, or one that
    // found fewer waiters than free permits) when it is first in line; further back, it tries within the
    // retry window: the waiters ahead may have left the line, which announces nothing.
    meaning: (event: FeedEvent) =>
      event === "released" ? (ahead === 0 ? "now" : "soon") : event.startsWith(named) ? "grant" : "ignore",
    // A release granted the lock to this waiter: it holds from its last refused try, which Redis ran before
    // the release (a later one would have got the lock), so the deadline can only be early. The grant must
    // name that try's place (a late one may be for an earlier stay) and leave at least half itself.
    granted(event: FeedEvent, refusedAt: number) {
      const [, , at, ms, permit] = event.split(":").map(Number);
      if (at !== place || !ms || refusedAt + ms - clockDriftAllowance(ms) - monotonicNow() < ms / 2)
        return undefined;
      this.queued = false;
      return { sentAt: refusedAt, pttl: ms, permit: permit || 1 };
    },
  };
}

/**
 * A fair waiter's wait: each try renews its seat; woken by `events` (if any) when a release hands it the lock,
 * which it then holds with no request (unless fencing, whose token only a try issues). Leaving, it gives its
 * place up (`leave`, in the `background`), also after a try left behind, which may have queued it.
 */
export function fairWaiter(
  token: string,
  plan: AcquirePlan,
  events: LockEvents | undefined,
  leave: (member: string) => Promise<void>,
  background: (work: Promise<unknown>) => void,
): Waiter {
  const seat = takeSeat(token, plan);
  const woken = events?.waiter(plan, seat.meaning);
  let ticket: QueueTicket | undefined;
  let sentAt = 0;
  let refusedAt: number | undefined; // send time of the last refused try: it ran before any later release
  return {
    trying(lastTry) {
      woken?.trying();
      sentAt = monotonicNow();
      ticket = seat.ticket(lastTry);
      return ticket;
    },
    answered(take) {
      woken?.answered(take);
      if (ticket) seat.note(take, ticket);
      if (take?.kind === "held") refusedAt = sentAt;
    },
    next: (step) => (woken ? woken.next(step) : { at: step.planned, spent: 0 }),
    async wait(until, signal, local) {
      if (!woken) return pollUntil(until, signal, local);
      await woken.wait(until, signal, local);
      const grant = woken.takeGrant();
      return grant && refusedAt !== undefined && !plan.fencing ? seat.granted(grant, refusedAt) : undefined;
    },
    close(abandoned) {
      woken?.close();
      if (seat.queued) background(leave(seat.member));
      if (abandoned) background(abandoned.then(() => leave(seat.member)));
    },
  };
}
