import { clockDriftAllowance, monotonicNow } from "../clock";
import { newCallId } from "../ids";
import { type AcquirePlan, QUEUE_GRACE_MS } from "../options";
import type { QueueTicket, Seat, Take } from "../store";
import type { FeedEvent } from "../wake/feed";

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
