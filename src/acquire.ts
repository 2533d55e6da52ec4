import { backoffDelay } from "./backoff";
import { backgroundTimer, clockDriftAllowance, monotonicNow } from "./clock";
import {
  type AcquisitionFailureReason,
  type InstanceFailure,
  InstanceTimeoutError,
  LockRedisError,
} from "./errors";
import { newCallId } from "./ids";
import type { LeaseOwner } from "./lease";
import type { AcquirePlan } from "./options";
import { abortable, overdue, TIMED_OUT, within } from "./race";
import { mayHaveRun, type QueueTicket, type Take } from "./store";
import type { TokenGate } from "./token-leases";
import { pollUntil } from "./waiting";

/** How one acquisition ended; `permit` is the 1-based permit held (1 for a lock). */
export type Outcome =
  | {
      readonly acquired: true;
      readonly attempts: number;
      readonly sentAt: number; // monotonic time the winning request was sent: the lease counts from it
      readonly pttl: number; // the lease Redis set, in ms, as of `sentAt`: the plan's, or a grant's (shorter or longer)
      readonly fencingToken: number | undefined;
      readonly permit: number;
      readonly hold: string; // the id naming the hold on Redis (the winning try's, or a grant's waiter's)
      // As `Take`'s, and false if an earlier try found another holder: whether the token's hold lived on
      readonly kept: boolean | undefined;
    }
  | {
      readonly acquired: false;
      readonly attempts: number;
      readonly elapsedMs: number;
      readonly reason: AcquisitionFailureReason;
      readonly error?: LockRedisError | undefined;
      readonly instances?: readonly InstanceFailure[] | undefined; // with a quorum: failed in the last try
      readonly here?: boolean | undefined; // the holder was another caller of this instance, waited for here
      readonly turnSilent?: boolean | undefined; // with `here`: `error` is that caller's try's silence, not this one's
      readonly stalled?: boolean | undefined; // the timeout ran out with the last try undone: this process stalled
      readonly local?: boolean | undefined; // the last "held" was a wait here (a turn, a request of the token)
      readonly waitedHere?: number | undefined; // of `attempts`, those that were waits here: nothing sent
    };

export interface AcquisitionContext extends LeaseOwner {
  readonly plan: AcquirePlan;
  readonly token: string;
  /** Undefined: this may go to Redis; else settles when the instance's earlier acquisition or hold ends. */
  readonly turn?: (() => Promise<void> | undefined) | undefined;
  /** With a token the caller chose: keeps each try apart from a release of the token here (`TokenLeases`). */
  readonly gate?: TokenGate | undefined;
  /**
   * The instance's: the error of the newest try of the acquisition that had its turn, until one is answered
   * (the instance clears it when a seeded lease takes the turn), and when that try was sent while it is
   * unanswered. A caller that only waited for the turn fails with an error that came during its wait (not as
   * "held"), or names the silence as the cause.
   */
  readonly erring?: TurnErrors | undefined;
}

const NEVER = Infinity; // not Number.POSITIVE_INFINITY: a bundler keeps a property read it cannot prove pure

/**
 * Tries and waits, never past the holder's lease or the timeout. Each request, a subscription too, counts
 * against `attempts`; a try left behind is undone once answered; "held" only if the last answer saw a holder.
 */
export async function acquire({
  lockId,
  store,
  plan,
  token,
  background,
  turn,
  gate,
  erring,
}: AcquisitionContext): Promise<Outcome> {
  const { attempts, backoff, lease, signal } = plan;
  const started = monotonicNow();
  const budgetEnd = started + (plan.timeout ?? NEVER);
  const waiter = store.waiter?.(token, plan, background);
  const silence = (operation: "acquire" | "release", waited: number) =>
    new LockRedisError(lockId, operation, new InstanceTimeoutError(lockId, operation, waited));
  let tries = 0;
  let waitedHere = 0; // tries that only waited here (for the turn, or a release of the token): none sent
  let spent = 0; // requests of the attempt budget: tries, plus a subscription
  let last: Held | LockRedisError | undefined; // the last answer: a holder (a wait here counts), or an error
  let unanswered: LockRedisError | undefined; // Redis's silence that ends the acquisition
  let erringSince: number | undefined; // the first try since an answer that erred, or met an unanswered release
  let refused = NEVER; // the quickest refused try's round trip
  let replied = NEVER; // the quickest reply, errors too: a round-trip floor until a try was refused
  let slowest = 0; // the slowest recent reply (halved by each newer one): a try cut off sooner says nothing
  let abandoned: Promise<unknown> | undefined; // the undo of a try left behind (the acquisition then ends)
  let stalled = false; // a try was read after its lease was of use (sent again, off the budget: once)
  let unansweredStall: string | undefined; // the request id of a try sent again unanswered, until it is
  let turnTaken = !turn;
  let metHolder = false; // a try found the key held by another token: the token's hold, if any, came since
  // The last moment a try can be sent and answered in time: a round trip (>= 1 ms: timers fire early) before.
  const lastTryAt = () => budgetEnd - Math.max(1, refused < NEVER ? refused : replied < NEVER ? replied : 0);

  // A try the timeout cut off cannot tell a slow reply from an outage: the last answer decides, and the
  // unanswered try's error is the cause, so the failure tells both.
  const fail = (why: "timeout" | "spent" | "no-reply" | "refused"): Outcome & { acquired: false } => {
    const base = {
      acquired: false as const,
      attempts: tries,
      elapsedMs: monotonicNow() - started,
      waitedHere: waitedHere || undefined,
    };
    // Waited here while Redis failed the turn's tries (an error of before this wait belongs to an earlier
    // one), or while a failed release keeps the turn: an outage, told by this caller's own try's silence if
    // it had the turn since and sent one that went unanswered (another caller's error is that caller's).
    const turnError =
      last === HELD_HERE && erring
        ? (erring.release?.() ?? (erring.error && erring.at >= started ? erring.error : undefined))
        : undefined;
    if (turnError) last = (turnTaken && unanswered) || turnError;
    if (last && !(last instanceof LockRedisError) && (why === "timeout" || why === "spent")) {
      const here = last === HELD_HERE;
      // Its own try, sent once it had the turn, cut off by the timeout: as after a "held" answer.
      const own = why === "timeout" ? unanswered : undefined;
      // Else the turn's try was unanswered all the while this caller waited: Redis said nothing it could see.
      const since = here && !own ? erring?.since : undefined;
      const turnSilent = since !== undefined && since <= started;
      const error = own ?? (turnSilent ? silence("acquire", monotonicNow() - (since as number)) : undefined);
      const local = here || last === HELD_RELEASING;
      const reason = why === "spent" ? "held" : why;
      return {
        ...base,
        reason,
        instances: last.failures,
        error,
        here,
        turnSilent: (here && turnSilent) || undefined,
        local,
        stalled: last === STALLED || undefined,
      };
    }
    const error =
      (why !== "no-reply" && last instanceof LockRedisError ? last : unanswered) ??
      silence("acquire", base.elapsedMs);
    return { ...base, reason: "redis-error", error, instances: error.instances };
  };

  // One request; a try left behind (timed out, aborted) is undone by its request id once answered. No answer
  // ends the acquisition: as a timeout if the budget cut it off, else as Redis's silence.
  const send = async (
    ticket: QueueTicket | undefined,
    holdsTurn: boolean,
  ): Promise<Take | { kind: "error"; error: LockRedisError } | Outcome> => {
    const unmark = gate?.trying(); // sent in this same tick: a release started after it waits for it
    const nonce = newCallId();
    // Useful for a lease from its send: an answer later than that finds the lease it set gone. Read before
    // the call (a client may write the command in it): a pause between the two must shorten it, not lengthen
    // it. A wait between tries longer than the lease is no silence of Redis's.
    const sentAt = monotonicNow();
    const useful = sentAt + lease - clockDriftAllowance(lease);
    let left = false; // its caller gave up on it: a quorum semaphore starts no more rounds of it
    const request = store.take({
      token,
      nonce,
      lease,
      fencing: plan.fencing,
      queue: ticket,
      abandoned: () => left,
    });
    if (holdsTurn && erring) awaitAnswer(erring, request, sentAt);
    const undo = (permit?: number) => store.undo(token, nonce, lease, permit);
    const undoOnceAnswered = () =>
      request.then(
        (take) => (take.kind === "acquired" ? undo(take.permit) : undefined),
        (error) => (mayHaveRun(error) ? undo() : undefined),
      );
    const abandon = () => {
      left = true;
      abandoned ??= undoOnceAnswered();
    };
    const limit = Math.min(budgetEnd, useful) - sentAt;
    let won = false; // a try that took the lock stays marked until its lease is registered
    // The caller's wait keeps the process alive, until it ends (an abort ends it before the reply's bound);
    // `within`'s last turn after it does so itself. Of `limit` too: timers of one length share Node's list.
    const stopKeepingAlive = backgroundTimer(limit, () => {}, true);
    try {
      const take = await abortable(
        within(request, limit, () => {}, false),
        signal,
        abandon,
      );
      // Read only once the lease it set was of no more use (on a quorum, a late majority): undone. The first
      // such try of an acquisition is sent again, off the attempts, the process having likely stalled with the
      // answer unread (no holder's doing, no outage); another is as unanswered (a reply as slow as the lease).
      const useless =
        take !== TIMED_OUT && (take.kind === "acquired" ? monotonicNow() >= useful : take.late === true);
      // Settled `overdue`, this process stalled, which may have kept the try from leaving at all (fetch sends
      // in a later tick): such a try, unanswered or useless, is sent again off the attempts each time. Not
      // while an earlier one sent again for that is unanswered still: then Redis is silent too (a process
      // that lags on every try would else send them without end).
      const late = overdue(sentAt, limit);
      if (take === TIMED_OUT ? late && !unansweredStall : useless && (late || !stalled)) {
        waiter?.answered(undefined);
        stalled = true;
        if (take === TIMED_OUT) {
          unansweredStall = nonce;
          const answered = () => {
            if (unansweredStall === nonce) unansweredStall = undefined;
          };
          void request.then(answered, answered);
        }
        left = true; // given up on too: a quorum semaphore starts no more rounds of it (review helper-169)
        background(undoOnceAnswered()); // not `abandon`: it ends the acquisition
        return STALLED;
      }
      if (take === TIMED_OUT || useless) {
        abandon();
        // Cut off by the timeout sooner than the recent replies came (`slowest`), it says nothing of Redis.
        const telling = budgetEnd > useful || limit >= slowest;
        unanswered = telling ? silence("acquire", Math.max(0, limit)) : undefined;
        if (budgetEnd <= useful) return fail("timeout");
        // No answer within a lease this short is the lease's fault more likely than Redis's.
        if (lease < SHORT_LEASE_MS) warnShortLease(lockId, lease, undefined);
        // The turn's try failed now, for want of an answer (one the timeout cut off fails nothing: its
        // outcome may tell an older error again, which must keep the moment it came; review helper-178).
        if (holdsTurn && erring) Object.assign(erring, { error: unanswered, at: monotonicNow() });
        return fail("no-reply");
      }
      if (waiter?.answered(take) === false || (take.kind === "held" && take.after)) return AGAIN;
      won = take.kind === "acquired";
      return take;
    } catch (error) {
      if (!(error instanceof LockRedisError)) throw error;
      if (mayHaveRun(error)) background(undo()); // its reply lost: undo it (only it)
      waiter?.answered(undefined);
      return { kind: "error", error };
    } finally {
      stopKeepingAlive();
      if (abandoned) background(abandoned);
      if (!won) unmark?.();
    }
  };

  try {
    for (;;) {
      tries += 1;
      spent += 1;
      const ticket = waiter?.trying(spent >= attempts);
      const sentAt = monotonicNow();
      // Waits here, sending nothing: for a release of this token in flight (a try would confirm the hold, then
      // lose it; the instance's turn passes once it is answered), or for the instance's turn. A lease of
      // waiting for Redis to answer that release is silence.
      const releasing = gate?.releasing();
      const turnEnds = turnTaken || releasing ? undefined : turn?.();
      const local = releasing ?? turnEnds;
      turnTaken ||= !local;
      // A wait for a request of this token here counts only while that request is unanswered: it was (the
      // wait ended), so this try's own answer, or silence, decides. (A wait for the turn stays a "held".)
      if (!local && last === HELD_RELEASING) last = undefined;
      const holdsTurn = erring && turn && !local;
      if (local) waitedHere += 1;
      const result = local ? (turnEnds ? HELD_HERE : HELD_RELEASING) : await send(ticket, !!holdsTurn);
      const now = monotonicNow();
      if (result === STALLED || result === AGAIN) {
        spent -= 1;
        // A timeout that ran out in the stall is no outage; a wait here before it says nothing of this try.
        if (last === undefined || last === HELD_HERE || last === HELD_RELEASING) last = result;
        // Sent again on Redis's answer (a later try of the token holds, a name spent): an earlier try's error,
        // or silence, is no longer the last word (review helper-218).
        if (result === AGAIN) {
          if (last instanceof LockRedisError) last = result;
          erringSince = undefined;
          if (holdsTurn) Object.assign(erring, { error: undefined, at: now });
        }
        if (now >= lastTryAt()) return fail("timeout");
        if (signal?.aborted) throw signal.reason; // sent again at once, with no wait that would see it
        continue;
      }
      // A try this process stalled over (above) tells nothing of Redis: the turn's record keeps its error.
      if (holdsTurn && !("acquired" in result)) {
        erring.error = result.kind === "error" ? result.error : undefined;
        erring.at = now;
      }
      if ("acquired" in result) return result;
      if (result.kind === "acquired") {
        if (now - sentAt >= lease / 2 && lease < SECONDS_LIKE_MS) warnShortLease(lockId, lease, now - sentAt);
        const { fencingToken, permit, hold } = result;
        const kept = metHolder ? false : result.kept;
        // A grant longer than the lease holds on past it (review helper-172): its deadline is the grant's.
        const pttl = Math.max(lease, result.pttl ?? 0);
        return { acquired: true, attempts: tries, sentAt, pttl, fencingToken, permit, hold, kept };
      }
      if (!local) replied = Math.min(replied, now - sentAt);
      // Halved, not kept: a reply this process read late after a stall must not excuse a silence later on.
      if (!local) slowest = Math.max(slowest / 2, now - sentAt);
      last = result.kind === "error" ? result.error : result;
      // Not a quorum's undecided or late majority, nor a quorum semaphore's round on some permits only.
      metHolder ||=
        !local && result.kind === "held" && !result.late && !result.failures?.length && !result.partial;
      if (result.kind === "error" && result.error.refused) return fail("refused");
      if (result.kind === "error" || (local && !turnEnds)) erringSince ??= sentAt;
      else {
        erringSince = undefined; // an answer, or the turn passed (its holder's release was answered): no silence
        if (!local) refused = Math.min(refused, now - sentAt);
      }
      const outOfTime = now >= lastTryAt();
      const silent = erringSince !== undefined && now >= erringSince + lease;
      if (silent && local) {
        unanswered = silence("release", now - (erringSince as number));
        return fail("no-reply");
      }
      if (spent >= attempts || outOfTime || silent) return fail(outOfTime ? "timeout" : "spent");
      // Redis counted the pttl from between send and reply: by the reply + 1 ms (rounding) it surely expired.
      const pttl = result.kind === "held" ? result.pttl : -1;
      const cap = Math.min(pttl >= 0 ? now + pttl + 1 : NEVER, lastTryAt());
      const planned = Math.min(now + backoffDelay(tries, backoff), cap);
      const kind = local ? "local" : result.kind;
      const next = waiter
        ? waiter.next({ kind, now, planned, cap, lastTryAt: lastTryAt(), tries, spent })
        : { at: planned, spent: 0 };
      if (!next) return fail("spent"); // covered by announcements, and its tries are over
      spent += next.spent;
      const granted = await (waiter
        ? waiter.wait(next.at, signal, local)
        : pollUntil(next.at, signal, local));
      if (granted)
        return { acquired: true, attempts: tries, fencingToken: undefined, kept: false, ...granted };
      if (monotonicNow() >= lastTryAt()) return fail("timeout"); // a try sent now would only be undone
    }
  } finally {
    waiter?.close(abandoned);
  }
}

/** The instance's record of the turn-holding acquisition's newest try (see `AcquisitionContext.erring`). */
export interface TurnErrors {
  error: LockRedisError | undefined;
  /** Monotonic ms `error` came (or was cleared). */
  at: number;
  /**
   * Monotonic ms since which Redis answered none of the turn's tries, while one is unanswered: the first
   * unanswered try's send, or the last answer's arrival. A try cut off here (a timeout, an abort) stays
   * unanswered: the next caller to take the turn goes on with the same silence.
   */
  since: number | undefined;
  /** The turn's tries sent and not yet answered (by a reply or an error), with when each was sent. */
  unanswered: Map<Promise<unknown>, number>;
  /** The error of a failed release that keeps the turn now (until a retry is answered, or the key surely ended). */
  release?: (() => LockRedisError | undefined) | undefined;
}

/**
 * Counts `request`, a try of the turn's sent at `sentAt`, in `erring` until it settles; one that Redis
 * answered (a reply, an error) ends the silence, of the tries sent before it too (an earlier turn-holder's
 * cut off: review helper-178), one that ran out of time (a client's or a quorum member's timeout) does not.
 */
function awaitAnswer(erring: TurnErrors, request: Promise<unknown>, sentAt: number): void {
  const { unanswered } = erring;
  unanswered.set(request, sentAt);
  erring.since ??= sentAt;
  const settled = (answered: boolean) => {
    if (!unanswered.delete(request) || unanswered !== erring.unanswered || !answered) return;
    for (const [other, at] of unanswered) if (at <= sentAt) unanswered.delete(other);
    erring.since = unanswered.size > 0 ? monotonicNow() : undefined;
  };
  void request.then(
    () => settled(true),
    (error: unknown) => settled(!isSilence(error)),
  );
}

/** Whether a request failed for want of an answer: a timeout; on a quorum, one of every member that failed. */
function isSilence(error: unknown): boolean {
  if (error instanceof InstanceTimeoutError) return true;
  if (!(error instanceof LockRedisError)) return false;
  const failures = error.instances ?? [];
  if (failures.length > 0) return failures.every((failure) => isSilence(failure.error));
  return error.reason.startsWith("Redis did not answer");
}

/** A seeded lease takes the turn (no acquisition has it): what earlier tries met says nothing of a wait for it. */
export function turnHeld(erring: TurnErrors): void {
  erring.error = erring.since = undefined;
  erring.unanswered = new Map();
}

/** What a wait for this instance's turn counts as: the lock held (by another caller here), for how long unknown. */
const HELD_HERE: Held = { kind: "held", pttl: -1 };
/** What a wait for a release of this token here counts as: the same, with no other caller to name. */
const HELD_RELEASING: Held = { kind: "held", pttl: -1 };
/** A try this process stalled over (answered after its lease was of use, or overdue): undone, off the budget. */
const STALLED: Held = { kind: "held", pttl: -1 };
/**
 * A try whose answer counts for none: the waiter's word (`Waiter.answered`), or a later try of the token
 * holds (`Take.after`). Held, for how long unknown; off the budget.
 */
const AGAIN: Held = { kind: "held", pttl: -1 };

type Held = Take & { readonly kind: "held" };

const warned = new Set<string>();
const SHORT_LEASE_MS = 100; // ms: a shorter lease that no reply came within is named in the warning
// ms: a shorter lease half gone when answered may be meant in seconds; a longer one was slowed (a frozen
// Redis or process), which its unit does not explain
const SECONDS_LIKE_MS = 1_000;

// A lease under a second at least half gone when Redis answered (or, below SHORT_LEASE_MS, gone unanswered)
// is likely meant in seconds (`lease: 10`): warns once per lock id where there are process warnings (Node,
// Bun, Deno).
function warnShortLease(lockId: string, lease: number, roundTrip: number | undefined): void {
  const process = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } })
    .process;
  if (warned.has(lockId) || typeof process?.emitWarning !== "function") return;
  warned.add(lockId);
  process.emitWarning(
    `Lock ${JSON.stringify(lockId)}: a lease of ${lease} ms ${roundTrip === undefined ? "ran out before Redis answered" : `was ${Math.round(roundTrip)} ms gone when Redis answered`}; leases are in milliseconds`,
    { type: "UpstashLockWarning", code: "UPSTASH_LOCK_SHORT_LEASE" },
  );
}
