import { backoffDelay } from "./backoff";
import { clockDriftAllowance, monotonicNow } from "./clock";
import {
  type AcquisitionFailureReason,
  type InstanceFailure,
  InstanceTimeoutError,
  LockRedisError,
} from "./errors";
import { newCallId } from "./ids";
import type { LeaseOwner } from "./lease";
import type { AcquirePlan } from "./options";
import { abortable, TIMED_OUT, within } from "./race";
import type { Take } from "./store";
import { type Meaning, Waiting } from "./waiting";
import type { FeedEvent } from "./wake/feed";

/** How one acquisition ended. */
export type Outcome =
  | {
      readonly acquired: true;
      readonly attempts: number;
      /** Monotonic time the winning request was sent: the lease's deadline counts from it. */
      readonly sentAt: number;
      /** The lease Redis set, in milliseconds, as of `sentAt`: the plan's, or a shorter grant. */
      readonly pttl: number;
      readonly fencingToken: number | undefined;
      /** The 1-based permit held (1 for a lock). */
      readonly permit: number;
    }
  | {
      readonly acquired: false;
      readonly attempts: number;
      readonly elapsedMs: number;
      readonly reason: AcquisitionFailureReason;
      /** Why the last try failed, when it did. */
      readonly error?: LockRedisError | undefined;
      /** With a quorum: instances that failed during the last try. */
      readonly instances?: readonly InstanceFailure[] | undefined;
    };

/** What an acquisition needs: its owner, its plan and token, and (a Lock's) its turn. */
export interface AcquisitionContext extends LeaseOwner {
  readonly plan: AcquirePlan;
  readonly token: string;
  /**
   * A Lock's own turn: undefined when this acquisition may go to Redis (it then has the turn), or a
   * promise that settles once the instance's earlier acquisition, or what it holds, has ended.
   */
  readonly turn?: (() => Promise<void> | undefined) | undefined;
}

const NEVER = Number.POSITIVE_INFINITY;

/**
 * Acquires: tries, and between tries waits, never past the holder's lease or the timeout, woken by
 * announcements when it subscribed (when that costs fewer commands than polling). Every request
 * counts against `attempts`, the subscription included. Each try is bounded by what it can still be
 * useful for; a try left behind is undone when its answer comes. Gives up naming contention only
 * when the last answered try found a holder.
 */
export async function acquire({
  lockId,
  store,
  plan,
  token,
  background,
  turn,
}: AcquisitionContext): Promise<Outcome> {
  const { attempts, backoff, lease, signal } = plan;
  const started = monotonicNow();
  const budgetEnd = plan.timeout === undefined ? NEVER : started + plan.timeout;
  const seat = store.seat?.(token, plan);
  // Unfair: the first release a wait hears wakes it at once (one holder left, nobody else seen
  // taking the lock); once it has heard someone take the lock, a release wakes it within the retry
  // window (the releaser may take it straight back, other waiters heard it too), and an acquisition
  // sends it back to its planned wait.
  let turnedOver = false;
  const meaning = (event: FeedEvent): Meaning => {
    const fair = seat?.meaning(event);
    if (fair) return fair;
    if (event === "released") return turnedOver ? "soon" : "now";
    turnedOver = true;
    return "cancel";
  };
  const waiting =
    (plan.wakeOnRelease && store.events()?.waiting(meaning, !!seat, backoff.maxDelay)) || new Waiting();
  let tries = 0;
  /** Requests of the attempt budget spent: tries, plus a subscription. */
  let spent = 0;
  /** When Redis last answered (or the start): a request is left behind a lease after it. */
  let answeredAt = started;
  let last: { held: Take & { kind: "held" } } | { error: LockRedisError } | undefined;
  let noReply: LockRedisError | undefined;
  /** Whether the last try's limit was the caller's timeout (rather than a lease of silence). */
  let outOfBudget = false;
  /** When the schedule's last try falls, fixed at the first refusal. */
  let windowEnd = NEVER;
  let fastest = NEVER;
  /** The quickest reply of any kind, errors included: a floor for a round trip none of which was answered. */
  let quickest = NEVER;
  let hasTurn = !turn;
  /** Send time of the last try Redis answered "held": it ran before any release after it. */
  let refusedAt: number | undefined;

  // The latest moment a try can be sent and still be answered before the timeout: a round trip
  // before it, and never less than a millisecond (a timer may fire a little early).
  const lastTryAt = () =>
    budgetEnd - Math.max(1, fastest === NEVER ? (quickest === NEVER ? 0 : quickest) : fastest);

  const fail = (why: "timeout" | "spent" | "no-reply" | "refused"): Outcome => {
    const base = { acquired: false as const, attempts: tries, elapsedMs: monotonicNow() - started };
    if (last && "held" in last && (why === "timeout" || why === "spent")) {
      return { ...base, reason: why === "timeout" ? "timeout" : "held", instances: last.held.failures };
    }
    const error =
      (why !== "no-reply" && last && "error" in last ? last.error : noReply) ??
      new LockRedisError(lockId, "acquire", new InstanceTimeoutError(lockId, "acquire", base.elapsedMs));
    return { ...base, reason: "redis-error", error, instances: error.instances };
  };

  /**
   * One try. Left behind (out of time, or aborted: the acquisition ends), its request is undone once
   * its answer is in (by its receipt, so nothing later is touched), and the waiter leaves the line.
   */
  const tryOnce = async (): Promise<
    Take | { kind: "local"; ended: Promise<void> } | { kind: "error" } | typeof TIMED_OUT
  > => {
    if (!hasTurn) {
      const ended = turn?.();
      if (ended) {
        last = { held: { kind: "held", pttl: -1 } };
        return { kind: "local", ended };
      }
      hasTurn = true;
    }
    const nonce = newCallId();
    const ticket = seat?.ticket(spent >= attempts);
    const request = store.take({ token, nonce, lease, fencing: plan.fencing, queue: ticket });
    const undo = (permit?: number) => store.undo(token, nonce, lease, permit);
    let abandoned = false;
    const abandon = () => {
      if (abandoned) return;
      abandoned = true;
      background(
        request
          .then(
            (take) => (take.kind === "acquired" ? undo(take.permit) : undefined),
            () => undo(),
          )
          .then(() => seat && store.leave?.(seat.member, lease)),
      );
    };
    const useful = answeredAt + lease - clockDriftAllowance(lease);
    // Which bound is nearer decides what running out means: the caller's timeout, or Redis's silence.
    outOfBudget = budgetEnd <= useful;
    const limit = Math.min(budgetEnd, useful) - monotonicNow();
    try {
      const take = await abortable(within(request, limit, abandon), signal, abandon);
      if (take === TIMED_OUT) {
        noReply = new LockRedisError(lockId, "acquire", new InstanceTimeoutError(lockId, "acquire", limit));
        return take;
      }
      if (ticket) seat?.note(take, ticket);
      if (take.kind === "held") last = { held: take };
      return take;
    } catch (error) {
      if (!(error instanceof LockRedisError)) throw error;
      // The request may have run with its reply lost: undo it (only it), and let the next try see.
      if (!error.refused) background(undo());
      if (ticket) seat?.note(undefined, ticket);
      last = { error };
      return { kind: "error" };
    }
  };

  try {
    for (;;) {
      tries += 1;
      spent += 1;
      waiting.reset();
      const sentAt = monotonicNow();
      const result = await tryOnce();
      const now = monotonicNow();
      if (result !== TIMED_OUT && result.kind !== "local") quickest = Math.min(quickest, now - sentAt);
      if (result === TIMED_OUT) return fail(outOfBudget ? "timeout" : "no-reply");
      if (result.kind === "acquired") {
        const { fencingToken, permit } = result;
        if (now - sentAt >= lease / 2) warnShortLease(lockId, lease, now - sentAt);
        return { acquired: true, attempts: tries, sentAt, pttl: lease, fencingToken, permit };
      }
      if (result.kind === "error" && last && "error" in last && last.error.refused) return fail("refused");
      if (result.kind === "held") {
        answeredAt = now;
        refusedAt = sentAt;
        fastest = Math.min(fastest, now - sentAt);
      }
      if (result.kind !== "error" && windowEnd === NEVER && attempts !== NEVER) {
        windowEnd = now;
        for (let attempt = 1; attempt < attempts; attempt++) windowEnd += backoffDelay(attempt, backoff, 0);
      }
      const outOfTime = now >= lastTryAt();
      const covered = result.kind === "held" && waiting.covers(sentAt);
      const silent = result.kind === "error" && now >= answeredAt + lease;
      if (spent >= attempts || outOfTime || silent || (covered && now >= windowEnd)) {
        return fail(outOfTime ? "timeout" : "spent");
      }
      // Redis counted the pttl from some moment between the send and the reply: by the reply plus a
      // millisecond of rounding, the key has surely expired.
      const pttl = result.kind === "held" ? result.pttl : -1;
      const cap = Math.min(pttl >= 0 ? now + pttl + 1 : NEVER, lastTryAt());
      const polls = (span: number) => {
        let count = 0;
        for (let elapsed = 0; elapsed < span && count < attempts - spent; count++) {
          elapsed += Math.max(1, backoffDelay(tries + count, backoff, 0));
        }
        return count;
      };
      if (
        result.kind === "held" &&
        waiting.subscribeIfItPays(attempts - spent, Math.min(windowEnd, cap) - now, polls)
      ) {
        spent += 1;
      }
      const planned = Math.min(now + backoffDelay(tries, backoff), cap);
      const wakeAt = waiting.nextTryAt(planned, sentAt, Math.min(cap, windowEnd));
      // A woken waiter retries from one round trip after the release (time for a holder that takes
      // the lock straight back to announce it) over three more, so the first retry's success reaches
      // the rest before they send theirs.
      const roundTrip = Math.min(fastest, backoff.delay);
      const window = { after: roundTrip, spread: Math.min(3 * roundTrip, backoff.delay) };
      await waiting.until(wakeAt, signal, window, result.kind === "local" ? result.ended : undefined);
      // A grant needs the try that fencing issues its token with.
      const grant = waiting.takeGrant();
      const granted =
        grant && refusedAt !== undefined && !plan.fencing ? seat?.granted(grant, refusedAt) : undefined;
      if (granted) return { acquired: true, attempts: tries, fencingToken: undefined, ...granted };
      // A wait that ran to the last moment leaves no time for a try: one sent now would only be undone.
      if (monotonicNow() >= lastTryAt()) return fail("timeout");
    }
  } finally {
    waiting.close();
    // A waiter that stops waiting gives its place up, rather than hold the line until it expires.
    if (seat?.queued) background(store.leave?.(seat.member, lease) ?? Promise.resolve());
  }
}

const warned = new Set<string>();

/**
 * A lease half gone (or more) by the time Redis's reply came is too short to rely on, most likely
 * one meant in seconds (`lease: 10`): says so once per lock id, as a process warning where the
 * runtime has them (Node, Bun, Deno's Node compatibility), and nowhere else. It never throws.
 */
function warnShortLease(lockId: string, lease: number, roundTrip: number): void {
  const process = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } })
    .process;
  if (warned.has(lockId) || typeof process?.emitWarning !== "function") return;
  warned.add(lockId);
  process.emitWarning(
    `Lock ${JSON.stringify(lockId)}: a lease of ${lease} ms was ${Math.round(roundTrip)} ms gone when Redis answered; leases are in milliseconds`,
    { type: "UpstashLockWarning", code: "UPSTASH_LOCK_SHORT_LEASE" },
  );
}
