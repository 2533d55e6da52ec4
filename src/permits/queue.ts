import { clockDriftAllowance, monotonicNow } from "../clock";
import { newCallId } from "../ids";
import { type AcquirePlan, QUEUE_GRACE_MS } from "../options";
import type { QueueTicket, Seat, Take } from "../store";
import type { FeedEvent } from "../wake/feed";

/**
 * A fair waiter's seat in line, for one acquisition: everything fairness adds to waiting, in one
 * place. Its name in line is `<id>:<grant ms>:<token>`, unique per acquisition, so that nothing done
 * for an earlier stay of the same token (a late leave, a grant read late) touches this one, and so
 * that a release knows how long to hand it the lock for. How long a waiter stands in for itself when
 * it stops trying (its entry's life, and a grant's) is one number: its longest wait between tries,
 * plus {@link QUEUE_GRACE_MS}.
 */
export function takeSeat(token: string, plan: AcquirePlan): Seat {
  const standIn = Math.ceil(plan.backoff.maxDelay) + QUEUE_GRACE_MS;
  const id = newCallId();
  const member = `${id}:${Math.min(plan.lease, standIn)}:${token}`;
  // Grants name the waiter by its id, which carries no token and is known at once: a grant can
  // come before the reply of the try that queued it.
  const named = `granted:${id}:`;
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
    // Only a grant to this waiter wakes it, at once; or, first in line, an unfair release (0.2's, or
    // a plain Lock's on the same key), which names no one.
    meaning: (event: FeedEvent) =>
      event === "released" ? (ahead === 0 ? "now" : "ignore") : event.startsWith(named) ? "grant" : "ignore",
    /**
     * A release handed the lock to this waiter: it holds for the grant, counted from its last
     * refused try, which Redis ran before the release (a later one would have found the lock its
     * own), so the deadline can only be early. The grant must name the place that try found (one
     * read late may be for an earlier stay in line), and leave at least half of itself.
     */
    granted(event: FeedEvent, refusedAt: number) {
      const [, , at, ms, permit] = event.split(":").map(Number);
      if (at !== place || !ms || refusedAt + ms - clockDriftAllowance(ms) - monotonicNow() < ms / 2)
        return undefined;
      this.queued = false;
      return { sentAt: refusedAt, pttl: ms, permit: permit || 1 };
    },
  };
}
