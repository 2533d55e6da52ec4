import { backgroundTimer, clockDriftAllowance, monotonicNow } from "./clock";
import { ensureAsyncDisposeSymbol } from "./dispose-symbol";
import { InstanceTimeoutError, type LockLossReason, LockLostError, LockRedisError } from "./errors";
import { newCallId } from "./ids";
import { overdue, TIMED_OUT, within } from "./race";
import { type HoldCall, type LockStore, NOT_HELD, type Observation, undoing } from "./store";
import type { TokenLeases } from "./token-leases";
import type { LockStatus } from "./types";
import { check } from "./validate";

ensureAsyncDisposeSymbol();

/** What a lock or semaphore shares with each of its acquisitions and leases. */
export interface LeaseOwner {
  readonly lockId: string;
  readonly store: LockStore;
  /** Hands work that outlives a call to the lock's `pending` and the platform's `waitUntil`. */
  readonly background: (work: Promise<unknown>) => void;
  /** The leases of caller-chosen tokens here, one hold per token. */
  readonly tokens?: TokenLeases | undefined;
}

export interface LeaseContext extends LeaseOwner {
  readonly token: string;
  /** The permit held (1 for a lock): later requests touch only it. */
  readonly permit: number | undefined;
  /** The lease renewals ask for, in milliseconds. */
  readonly lease: number;
  /** Milliseconds between renewals, when auto-extend is on. */
  readonly renewInterval: number | undefined;
  readonly onLost: ((error: LockLostError) => void) | undefined;
  /**
   * Called when the lease ends: lost, given up, run out (such a lease is watched), or released, once Redis
   * answered or the key surely expired (a failed release: at the lease's end, unless a retry is answered
   * first). May be called more than once: must be idempotent.
   */
  readonly onEnd?: (() => void) | undefined;
  /**
   * Called with a failed release's error, which keeps the turn (`onEnd` comes later): callers waiting for
   * the turn meanwhile fail with that error, not as contention (the Lock keeps it on that turn only).
   */
  readonly onReleaseFailed?: ((error: LockRedisError) => void) | undefined;
}

/** A lease's context; a token the caller chose (`plan.uuid`) is one hold with its other leases here. */
export function leaseContext(
  owner: LeaseOwner,
  plan: Pick<LeaseContext, "lease" | "renewInterval" | "onLost"> & { readonly uuid?: string | undefined },
  token: string,
  permit: number | undefined,
  onEnd?: () => void,
  onReleaseFailed?: (error: LockRedisError) => void,
): LeaseContext {
  const { lease, renewInterval, onLost } = plan;
  const { lockId, store, background } = owner; // not spread: a fixed shape is several times cheaper to make
  const tokens = plan.uuid === token ? owner.tokens : undefined;
  return {
    lockId,
    store,
    background,
    tokens,
    token,
    permit,
    lease,
    renewInterval,
    onLost,
    onEnd,
    onReleaseFailed,
  };
}

/** What Redis confirmed as a lease starts: the token holds for `pttl` ms as of monotonic time `sentAt`. */
export interface Confirmation {
  readonly sentAt: number;
  /** Remaining lease in milliseconds (-1: the key has no expiry). */
  readonly pttl: number;
  readonly fencingToken: number | undefined;
  /** The id naming the hold on Redis (the winning try's, or a grant's waiter's). */
  readonly hold: string;
}

/**
 * How a lease's hold ended here: lost, released from here, or released as the last caller sharing it ended
 * ("ended": no loss to any lease it took the hold over from, whose callers had ended or were made in theirs).
 */
type Ending = LockLossReason | "released" | "ended";

/** One hold of a lock or permit per acquisition: sharers never collide. Ends on release or loss, for good. */
export class Lease implements AsyncDisposable {
  readonly #c: LeaseContext;
  readonly #fencingToken: number | undefined;
  readonly #tookHere: boolean; // an acquisition here made it: its try's id, on the hold's list, confirms it
  // The id naming its hold on Redis (`HoldCall`): "" for a token acquired elsewhere, whose release and
  // extend act on any hold of it.
  readonly #hold: string;
  #deadline = 0;
  #ended = false; // released (or releasing) or lost here: nothing of it runs again; `remainingMs` is 0
  #gone = false; // known gone from Redis (released, or taken by another owner): later calls send nothing
  #releasing: Promise<boolean> | undefined; // release() in flight: another sends nothing, and shares its fate
  #released = false; // a release was sent from here: calls on it stay here (a newer hold of its token is not its)
  // The newer lease of its token it gave its hold to (`retire`): its release must not end that hold.
  #successor: Lease | undefined;
  // Leases that handed their hold to this one: lost when its hold ends, as this one was, or released.
  #followers: ((ending: Ending) => void)[] = [];
  #lossReason: LockLossReason | undefined;
  #controller: AbortController | undefined; // made when asked for: most leases end with no signal read
  #watched: boolean; // its loss or end is observable (signal, onLost, auto-extend, onEnd): deadline timed
  #cancelDeadline: (() => void) | undefined;
  #cancelRenewal: (() => void) | undefined;
  #cancelHandOver: (() => void) | undefined; // a failed release hands the turn on when the key surely expired
  #topUp = false; // started short (a fair grant), or took a longer hold over: its next renewal reads it
  #confirmed = false; // Redis confirmed this token (one acquired elsewhere waits for its first check)
  #heardAt = Number.NEGATIVE_INFINITY; // the send time of the newest request whose answer counted, held or not
  #renewals = 0; // renewals sent: a late answer goes on with the chain only if none was sent after it
  #unsure = false; // the newest renewal is unanswered or failed: it may run, or have run, in Redis
  #extending = 0; // extends not answered by Redis (failed at the client too): each may still run in Redis
  #strayReleased = false; // what such a renewal may have renewed after the lease expired here was released
  #working = false; // runExclusive's work runs under it: another's release ends the hold under that work
  #claims = 0; // callers that end their own acquisition of this hold (a Lock's acquireOrThrow, runExclusive)
  #claimsMoved = false; // retired while holding: its callers' shares count on its successor
  #ownClaims = 0; // of those, the callers that acquired this lease: shares moved in from older ones are not
  #claimed = false; // such a caller acquired it: once `#ownClaims` are over, nobody works under it
  #lastShareEnded = false; // the last caller sharing the hold ended: its release ends the hold for all
  #ownInterval: number | undefined; // its own auto-extend's interval, ms, while its callers work
  // The auto-extend intervals of older leases it took a live hold over from (their own and those they had),
  // kept while their work may still go on under it: a plain lease's for as long as it holds.
  readonly #inherited = new Map<Lease, number>();

  /** @internal Made by the library when an acquisition confirms a token, or for one acquired elsewhere. */
  constructor(context: LeaseContext, confirmed: Confirmation | undefined) {
    this.#c = context;
    this.#fencingToken = confirmed?.fencingToken;
    this.#tookHere = confirmed !== undefined;
    this.#hold = confirmed?.hold ?? "";
    this.#ownInterval = context.renewInterval;
    // A Lock's turn ends with its lease, also one left to run out unreleased, as 0.2 allowed (`onEnd`).
    const { onLost, renewInterval, onEnd } = context;
    this.#watched = onLost !== undefined || renewInterval !== undefined || onEnd !== undefined;
    if (confirmed) this.#confirm(confirmed.sentAt, confirmed.pttl, true);
  }

  /** The lock's id. */
  get id(): string {
    return this.#c.lockId;
  }

  /** With `fencing` (else undefined): above all earlier tokens for this id; resources refuse smaller ones. */
  get fencingToken(): number | undefined {
    return this.#fencingToken;
  }

  /**
   * Milliseconds until the local deadline: the lease last confirmed (acquire, renewal, extend, status),
   * counted on a monotonic clock from that request's send, less 1 % + 2 ms for drift. 0 once released/lost.
   */
  get remainingMs(): number {
    this.#checkDeadline();
    return this.active ? Math.max(0, Math.floor(this.#deadline - monotonicNow())) : 0;
  }

  /**
   * Aborts on loss with a {@link LockLostError}: another token or no key ("taken"), or the deadline passed
   * unrenewed ("expired"); reads check the deadline, even after a stall. Never aborted by `release()`.
   */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      deadlineAware(this.#controller.signal, () => this.#checkDeadline());
      if (this.#lossReason) this.#controller.abort(this.#lossError());
      this.#watch();
    }
    return this.#controller.signal;
  }

  #watch(): void {
    if (this.#watched) return;
    this.#watched = true;
    this.#arm();
  }

  /**
   * Deletes the key only if it holds this token, in this lease's hold (not a newer hold of the token); stops
   * renewals. Past the lease, it ends in the background.
   * @returns true if this call deleted the lock; false if the token no longer held it, or the lease ran out.
   * @throws {LockRedisError} when Redis could not be reached or refused; or did not answer within the lease,
   * for a seeded token's lease never confirmed here (the holder's lease is unknown).
   */
  async release(): Promise<boolean> {
    // Past the deadline (a stall kept its timer from running), the loss is reported before the release ends
    // the lease: another owner may have held the expired key meanwhile.
    this.#checkDeadline();
    // A second call while one is in flight: false once that one answers (only one deleted the key), or its
    // error: Redis has not answered either. The stray release of a lost lease is not waited for: nothing is
    // left of the lease, and it ends in the background as a release past the lease does.
    if (this.#releasing)
      return (this.#strayReleased ? this.#within(this.#releasing, 0) : this.#releasing).then(() => false);
    if (!this.releasable) return false;
    this.#released = true;
    this.#releasing = this.#release();
    return this.#releasing;
  }

  async #release(): Promise<boolean> {
    const { lease } = this.#c;
    // Past the lease, Redis has expired the key: the caller need not wait for the answer, nor for a same-token
    // try in flight (below); what is left of it runs in the background.
    const limit = this.#confirmed ? this.#deadline + clockDriftAllowance(lease) - monotonicNow() : lease;
    // Released from now on: no renewal, no loss report. The Lock's next caller waits until Redis answered, or
    // the key surely expired (`#handOver`): this caller's `await using` after `release()`, or its retry of a
    // failed one, must still find its own lease current, not the next caller's.
    // The leases it took the hold over from are told now, though a same-token try in flight may yet take the
    // hold over (the release then sends nothing): held back for it, they went untold of losses it found
    // (review helper-170), so an older plain lease may be told "taken" of a hold that lives on.
    this.#end(false, this.#lastShareEnded ? "ended" : "released");
    const keyEndsAt = monotonicNow() + limit;
    const releasing = this.#releaseAfterTries();
    let released: boolean | typeof TIMED_OUT;
    try {
      released = await this.#within(releasing, limit);
      // A seeded token's lease this process never saw confirmed: its bound is this lock's `lease`, not the
      // holder's, which may run longer. Unanswered, the release may still land and delete that hold.
      if (released === TIMED_OUT && !this.#confirmed) throw silence(this.#c.lockId, "release", limit);
    } catch (error) {
      this.#releasing = undefined; // not known released: a later release() may try again; the lease bounds the key
      this.#cancelHandOver ??= backgroundTimer(keyEndsAt - monotonicNow(), () => this.#handOver());
      if (error instanceof LockRedisError) this.#c.onReleaseFailed?.(error);
      throw error;
    }
    if (released === TIMED_OUT) this.#handOver(); // the key expired with the lease
    if (released !== TIMED_OUT) this.#gone = true;
    else void releasing.then(() => (this.#gone = true)).catch(() => {}); // still sent once tries settle
    return released !== TIMED_OUT && released;
  }

  async #releaseAfterTries(): Promise<boolean> {
    const { store, token, lease, permit, tokens } = this.#c;
    // A same-token try in flight may take the hold over (this lease is then retired). Checked again after each
    // wait, and not awaited when none is: a try sent in between would overlap this release.
    while (tokens?.settled("trying", token)) await tokens.settled("trying", token);
    if (!this.releasable) {
      this.#handOver(); // a newer lease of the token took the hold over meanwhile
      return false;
    }
    // Answered, the turn passes in the same tick, before a same-token try waiting for the request itself goes
    // (even past the lease: one sent meanwhile could take the expired key again, and this request, landing
    // after it, would delete that hold).
    const answered = store.release(token, lease, permit, this.#call()).then((released) => {
      this.#handOver();
      return released;
    });
    this.#landing(answered);
    return answered;
  }

  /**
   * Keeps a same-token try here waiting until `request` surely ran or never will: Redis answered (or refused)
   * it, or its client gave up on it (a per-request timeout, a cut connection) and a lease has passed since its
   * send, the longest a request is taken to travel. A release, renewal or extend landing after that try would
   * end, or confirm for nobody, the hold the try made.
   */
  #landing(request: Promise<unknown>): void {
    const { tokens, token, lease } = this.#c;
    if (!tokens) return;
    const sentAt = monotonicNow();
    const landed = request.catch((error: unknown) => {
      if (error instanceof LockRedisError && error.refused) return;
      const left = sentAt + lease + clockDriftAllowance(lease) - monotonicNow();
      return new Promise<void>((resolve) => backgroundTimer(left, resolve));
    });
    tokens.track("releasing", token, landed);
  }

  /** A new call on this lease's hold only: a late copy of it finds a newer hold of its token not its own. */
  #call(): HoldCall {
    return { id: newCallId(), hold: this.#hold };
  }

  /** Hands the instance's turn on after a release (`onEnd`, idempotent). */
  #handOver(): void {
    this.#cancelHandOver?.();
    this.#c.onEnd?.();
  }

  /**
   * Adds `amt` ms to the remaining lease while this token holds the key; `extend(0)` only checks (as in 0.2).
   * @returns true when the key holds this token (and was extended); false when it does not, or, with no
   * request, when this lease ended here (released, lost, or its token acquired again here).
   * @throws {TypeError | RangeError} when `amt` is not a non-negative integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached, refused, or gave no answer within the lease.
   */
  async extend(amt: number): Promise<boolean> {
    check("amt", amt, "ms0", true);
    const { store, token, lease, permit } = this.#c;
    // Ended here (released, or lost: its deadline passed, the turn went on) it extends nothing, though the key
    // may still hold the token a moment: extended then, it would be held for nobody.
    if (this.#gone || this.#ended) return false;
    // Read before sending: a pause between the two (a GC, a frozen process) must shorten the lease, not lengthen it.
    const sentAt = monotonicNow();
    const request = store.extend(token, amt, lease, permit, this.#call());
    // A same-token try here waits for it as for a renewal: landing after that try confirmed this hold, it would
    // add `*` to the hold's list, which the try's undo (its caller gave up on it) could then not free.
    this.#landing(request);
    this.#extending += 1;
    // Answered after `#observe` gave up on it (Redis frozen, a slow reply), it goes on as a renewal's late
    // answer does: it confirms the longer hold, or, the loss reported meanwhile, it renewed a hold nobody has.
    // It starts no lease (a seeded token's): only an answer in time does, which the Lock then gives its turn.
    const answered = (answer?: Observation) => {
      this.#extending -= 1;
      if (answer && this.#ended) this.#dropStray(answer);
      else if (answer?.held && this.#confirmed) this.#confirm(sentAt, answer.pttl);
    };
    void request.then(answered, (error) => error instanceof LockRedisError && error.refused && answered());
    const held = await this.#observe("extend", request, sentAt);
    // Answered past the local deadline: the lease was reported lost, and the key it extended is released.
    return held && this.#lossReason === undefined;
  }

  /**
   * Asks Redis whether this token holds; the first yes confirms the hold (no undo of an abandoned try of the
   * token frees it from then on) and starts the lease.
   * @returns "ACQUIRED" when Redis says this token holds the key right now, in the hold this lease took (a
   * seeded token: any hold of it), otherwise "FREE".
   * @throws {LockRedisError} when Redis could not be reached, refused, or gave no answer within the lease.
   */
  async getStatus(): Promise<LockStatus> {
    const { store, token, lease, permit } = this.#c;
    // A hold this lease confirmed already needs no confirming again: it only looks (on a quorum, one round).
    // The lease counts from before the send, as in `extend`.
    const sentAt = monotonicNow();
    const asked = !this.#gone && store.status(token, lease, permit, !this.#confirmed, this.#hold);
    const held = asked && (await this.#observe("status", asked, sentAt));
    return held ? "ACQUIRED" : "FREE";
  }

  /** Releases, for `await using`; never throws (the key expires with its lease). `release()` tells more. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.releaseLast();
  }

  /**
   * @internal Releases where nobody is left to retry a failure (`await using`, the end of `runExclusive`):
   * a failed release, unless another call sent one first, hands the instance's turn on at once, not at the
   * lease's end; the key, if the release did not run, expires with its lease, and Redis refuses the next
   * caller until then. Never throws.
   * @returns whether this call deleted the hold, as `release()` says.
   */
  async releaseLast(): Promise<boolean> {
    const first = !this.#released; // else another call sent one, and its caller may still retry it
    return this.release().catch(() => {
      if (first) this.#handOver();
      return false;
    });
  }

  /** @internal Whether this lease holds as far as this process knows: confirmed, not released or lost. */
  get active(): boolean {
    return this.#confirmed && !this.#ended;
  }

  /**
   * @internal Whether the hold may still be this lease's to release: not known gone, nor retired. A
   * `release()` in flight leaves it true until answered (a failed one may be tried again).
   */
  get releasable(): boolean {
    return !this.#gone && !this.#successor;
  }

  /**
   * @internal Hands the hold to `successor`, a newer lease of this token here: this ends with no request or
   * loss, its `release()` sends nothing (it would end the successor's hold); lost ("taken") when that ends,
   * if it held, which the successor then watches for (its deadline too), whatever its own options. Unless
   * the successor's take found this hold gone (`kept` false, or undefined on the same permit): another
   * owner may have held since (review helper-159), so this lease is lost ("taken") and hands nothing on.
   */
  retire(successor: Lease, kept: boolean | undefined): void {
    // Another permit (a quorum's rounds may take one): two holds, each released by its own lease.
    const [mine, theirs] = [this.#c.permit, successor.#c.permit];
    const samePermit = mine === undefined || theirs === undefined || mine === theirs;
    // Reading `remainingMs` ends one past its deadline as "expired" first.
    const gone = kept === false || (kept === undefined && samePermit);
    if (gone && this.active && this.remainingMs > 0) this.lose("taken");
    if (!this.releasable || !samePermit) return;
    // Its callers' shares pass on with a hold still live here, or to a plain re-acquire here that no caller
    // of its own ends (made in their scope, maybe). Not from one lost or released (its callers were told) to
    // a fresh acquisition that a caller ends, which would outlive its own callers for theirs; nor to a seed,
    // whose release would end any hold of the token, another instance's too.
    this.#checkDeadline();
    this.#claimsMoved = this.active || (successor.#claims === 0 && successor.#tookHere);
    if (this.#claimsMoved) successor.#claims += this.#claims;
    if (this.active) successor.#inherit(this);
    this.#successor = successor;
    const followers = this.#followers.splice(0);
    this.#end();
    // A seed that never held tells `onLost` nothing (the instance's, the successor's already): its signal
    // aborts, for a caller its late "held" answer told the hold was there. Released once its callers all
    // ended (the last one's end may be what released it), nothing was lost; nor when it held and passed
    // callers' shares on, and the last of them ended (a plain lease made in their scope ends unannounced
    // with no lease after it too: review helper-159). A plain lease older than them all is told.
    const passedOn = this.#claimsMoved && this.#claims > 0 && this.#confirmed;
    const follow = (ending: Ending) => {
      if (this.#released) return; // released from here (by its callers' end, maybe): nothing after is its loss
      if (ending === "released" || ending === "ended") {
        if (!this.#callersEnded && !(ending === "ended" && passedOn))
          this.#reportLoss("taken", this.#confirmed);
      } else this.#reportLoss(ending, this.#confirmed);
    };
    successor.#followers.push(...followers, follow);
    successor.#watch();
  }

  /**
   * Renews at least as often as `older` did (its auto-extend, and what it inherited: their work may go on
   * under this hold), within a third of its own lease, until their callers end (`endClaim`).
   */
  #inherit(older: Lease): void {
    // Not a lease yet to hold (a seed): it renews only with auto-extend of its own.
    if (!this.active) return;
    const before = this.#renewEvery;
    for (const [lease, interval] of older.#inherited) this.#inherited.set(lease, interval);
    const own = older.#ownInterval;
    if (own !== undefined) this.#inherited.set(older, own);
    const every = this.#renewEvery;
    // A take never shortens its token's hold, but it may have found it gone (released elsewhere, deleted)
    // and made a new one. Taking over a hold whose lease here ran longer (or was yet to be read), its next
    // renewal reads how long Redis keeps it, lest the hold end here (older callers told of a loss) while
    // Redis holds on: the chain's next, even once it stops renewing for others; else one halfway through.
    const topUp = older.#deadline > this.#deadline || older.#topUp;
    if (topUp) this.#topUp = true;
    // A chain that ran goes on, at the new interval from its next renewal; else one starts here, by halfway
    // through at the latest. Read without `remainingMs`, which would end a lease past its deadline before the
    // retiring one's followers are its own: their loss would go untold. The deadline's timer tells it.
    if (before !== undefined || (every === undefined && !topUp)) return;
    this.#cancelRenewal?.();
    const half = Math.floor((this.#deadline - monotonicNow()) / 2);
    this.#renewIn(Math.max(1, Math.min(every ?? Number.POSITIVE_INFINITY, half)));
  }

  /**
   * Auto-extend's interval, ms: its own, or the shortest inherited one (each within a third of its lease);
   * undefined for none. Its next renewal reads it: none once undefined.
   */
  get #renewEvery(): number | undefined {
    const cap = Math.max(1, Math.floor(this.#c.lease / 3));
    const inherited = [...this.#inherited.values()].map((interval) => Math.min(interval, cap));
    const every = Math.min(this.#ownInterval ?? Number.POSITIVE_INFINITY, ...inherited);
    return every < Number.POSITIVE_INFINITY ? every : undefined;
  }

  /** @internal Runs `runExclusive`'s work under this lease, then `end`s it (by default, releases it). */
  async run<T>(
    work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
    end: () => Promise<unknown> = () => this.releaseLast(),
  ): Promise<T> {
    this.#working = true;
    try {
      return await work(this.signal, this);
    } finally {
      this.#working = false;
      await end();
    }
  }

  /** @internal A caller that will end its acquisition itself holds this hold (see {@link Lease.endClaim}). */
  claim(): void {
    this.#claims += 1;
    this.#ownClaims += 1;
    this.#claimed = true;
  }

  /**
   * @internal A caller that claimed this lease ended: the lease to release if it was the last sharing the
   * hold (the newest lease of it, maybe a later plain acquire's), else undefined (none either once the
   * hold was lost or released before it was handed on: that caller was told).
   */
  endClaim(): Lease | undefined {
    // A hold that ran out before this end (a stall kept its timer from running) was lost to this caller.
    this.heir.#checkDeadline();
    this.#ownClaims = Math.max(0, this.#ownClaims - 1);
    // Its own callers ended: the hold, if others still share it, is not renewed for their work any more.
    if (this.#ownClaims === 0) {
      const heir = this.heir;
      if (heir !== this) heir.#inherited.delete(this);
      else this.#ownInterval = undefined;
    }
    const last = this.#endShare();
    if (last) last.#lastShareEnded = true;
    return last;
  }

  /** A share of this hold ended: it, or the newer lease its shares moved to, counts it. */
  #endShare(): Lease | undefined {
    const successor = this.#claimsMoved ? this.#successor : undefined;
    if (successor) return successor.#endShare();
    this.#claims = Math.max(0, this.#claims - 1);
    return this.#claims === 0 && !this.#successor ? this : undefined;
  }

  /**
   * @internal A release through the Lock (`release()`, `await using`) is about to end this lease: if
   * `runExclusive` runs work under it, that release is another caller's (one whose lease ran out, or that
   * shares its uuid; or the work's own, which cannot be told apart). It ends the lease here whatever Redis
   * answers (no renewals), and the hold may be gone before any answer comes: lost to that work ("taken").
   */
  releasingThroughLock(): void {
    if (this.#working && this.releasable && !this.#ended) this.#reportLoss("taken");
  }

  /** @internal The lease that holds this one's hold now: itself, or the newest it was handed on to. */
  get heir(): Lease {
    return this.#successor?.heir ?? this;
  }

  /** @internal Whether the lease ended by a loss (its signal then carries the reason). */
  get lost(): boolean {
    return this.#lossReason !== undefined;
  }

  /** @internal Whether `release()` sent a release from here (not one refused at once as already gone). */
  get released(): boolean {
    return this.#released;
  }

  /** @internal Ends this lease as lost (a released one is never reported lost). */
  lose(reason: LockLossReason): void {
    if (!this.#confirmed) return; // seeded, not yet acquired elsewhere: it may hold later (ask again then)
    if (reason === "taken") this.#gone = true;
    if (this.#ended) return;
    this.#end(true, reason);
    // The stray's release first: a `release()` from onLost or the signal's listeners shares it.
    if (reason === "expired" && (this.#unsure || this.#extending > 0)) this.#releaseStray();
    this.#reportLoss(reason);
  }

  #reportLoss(reason: LockLossReason, tell = true): void {
    if (this.#lossReason !== undefined) return;
    this.#lossReason = reason;
    const error = this.#lossError();
    this.#controller?.abort(error);
    if (!tell || this.#callersEnded) return; // its signal tells the hold is gone; nobody is left to call
    try {
      const result: unknown = this.#c.onLost?.(error);
      if (result instanceof Promise) result.catch(() => {}); // an async handler's rejection stays handled
    } catch {
      // Documented: onLost runs from timers, so its errors are ignored rather than thrown.
    }
  }

  /** Its callers all ended their acquisition of it (others may share the hold still): none is left to tell. */
  get #callersEnded(): boolean {
    return this.#claimed && this.#ownClaims === 0;
  }

  #lossError(): LockLostError {
    return new LockLostError(this.#c.lockId, this.#lossReason ?? "taken", this.#renewEvery !== undefined);
  }

  async #observe(operation: "extend" | "status", request: Promise<Observation>, sentAt: number) {
    const { lease, lockId } = this.#c;
    // Unanswered when its bound ran out `overdue` (this process stalled; the request may not have left), it
    // gets its bound again: the stall was no silence of Redis's.
    const waited = async () => {
      const answer = await this.#within(request, lease);
      return answer === TIMED_OUT && overdue(sentAt, lease) ? this.#within(request, lease) : answer;
    };
    const answer = await waited().catch((error: unknown) => {
      // No token holds a key of another type: taken, known now (as a renewal finds), though the call fails.
      if (notALock(error) && sentAt >= this.#heardAt) this.lose("taken");
      throw error;
    });
    if (answer === TIMED_OUT) throw silence(lockId, operation, lease);
    // An answer to a request older than one already heard (a slow reply) was true for its moment only: a
    // late "not held" must not end a hold confirmed since, nor a late "held" start one found gone since.
    if (sentAt < this.#heardAt) return answer.held;
    this.#heardAt = sentAt;
    if (answer.held) this.#confirm(sentAt, answer.pttl);
    else this.lose("taken");
    return answer.held;
  }

  /** `request`'s answer, or TIMED_OUT after `ms`; a late answer is left to settle in the background. */
  #within<T>(request: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
    return within(request, ms, (late) => this.#c.background(late.catch(() => {})));
  }

  /**
   * Redis said the token holds `pttl` ms (-1: no expiry) as of `sentAt`, the request's send: the deadline can
   * only be early, never late. The first confirmation starts the lease's renewals; `granted`: by an
   * acquisition (a status check or extend of a token seeded here finds another process's lease, not its own).
   */
  #confirm(sentAt: number, pttl: number, granted = false): void {
    const { lease } = this.#c;
    const renewInterval = this.#renewEvery;
    const first = !this.#confirmed;
    // Newer news wins: a reply that overtook an older request's (a stalled renewal) says more of now.
    if (this.#ended || sentAt < this.#heardAt) return;
    this.#confirmed = true;
    this.#heardAt = sentAt;
    // No expiry (someone persisted the key) keeps the deadline known, or counts one lease from the start.
    const known = pttl < 0 && first ? lease : pttl;
    if (known >= 0) this.#deadline = sentAt + known - clockDriftAllowance(known);
    if (this.#watched) this.#arm();
    if (!first) return;
    // A short grant (a fair hand-over) is topped up halfway through, even without auto-extend: the holder
    // gets its full lease. A seeded token's hold is only with auto-extend: without, its lease is not ours.
    this.#topUp = pttl >= 0 && pttl < lease && (granted || renewInterval !== undefined);
    // Counted from the send, as the deadline is: a reply read late still renews in time.
    const after = Math.min(
      this.#topUp ? pttl / 2 : Number.POSITIVE_INFINITY,
      renewInterval ?? Number.POSITIVE_INFINITY,
    );
    if (after < Number.POSITIVE_INFINITY)
      this.#renewIn(Math.max(1, Math.floor(sentAt + after - monotonicNow())));
  }

  #checkDeadline(): void {
    if (this.active && this.#watched && monotonicNow() >= this.#deadline) this.lose("expired");
  }

  #arm(): void {
    if (!this.active) return;
    this.#cancelDeadline?.();
    this.#cancelDeadline = backgroundTimer(this.#deadline - monotonicNow(), () => this.lose("expired"));
  }

  #renewIn(delay: number): void {
    if (this.#ended) return;
    this.#cancelRenewal = backgroundTimer(delay, () => void this.#renew());
  }

  async #renew(): Promise<void> {
    const { store, token, lease, permit } = this.#c;
    const renewInterval = this.#renewEvery;
    // A renewal stuck on its connection must not use up the lease: past two thirds of the time left (a slow
    // link's round trip is well within), another goes, with the last third for it.
    const patience = Math.max(10, Math.floor((this.remainingMs * 2) / 3)); // reading it ends a lease past its deadline
    if (this.#ended || (renewInterval === undefined && !this.#topUp)) return;
    const sentAt = monotonicNow();
    const sent = ++this.#renewals;
    let answeredLate = false;
    // A late answer goes on as an answer in time would, unless another renewal went out meanwhile: then it only
    // confirms (one chain of renewals, never two).
    const answerLate = (late: Promise<Observation>) =>
      this.#c.background(
        late.then(
          (answer) => {
            answeredLate = true;
            if (sent === this.#renewals) this.#unsure = false;
            if (this.#ended || sent === this.#renewals) this.#renewed(sentAt, answer);
            else if (answer.held) this.#confirm(sentAt, answer.pttl);
          },
          () => {},
        ),
      );
    // A same-token try here waits for it as for a release: landing after that try, it would confirm the try's
    // hold, which the try's undo (its caller gave up on it) could then not free.
    // One of a hold taken here adds no `*` to its list: a copy the client re-sent, landing after a same-token
    // try took the key anew, must leave that try undoable (the answer to the other copy ended the wait for it).
    const request = store.renew(token, lease, permit, !this.#tookHere, this.#hold);
    this.#unsure = true;
    this.#landing(request);
    // The key turned into another type (WRONGTYPE) holds no token: taken, known now, not at the deadline. On
    // a quorum only when refusals leave no majority (`refused`): one member's WRONGTYPE is a failed minority.
    const answer = await within(request, patience, answerLate, false).catch((error: unknown) =>
      notALock(error) ? NOT_HELD : TIMED_OUT,
    );
    if (answer !== TIMED_OUT) {
      if (sent === this.#renewals) this.#unsure = false;
      return this.#renewed(sentAt, answer);
    }
    if (answeredLate) return;
    // Transient: retry soon until the deadline, checked here as an unwatched lease has no deadline timer.
    if (this.remainingMs === 0) this.lose("expired");
    else this.#renewIn(Math.max(10, Math.floor((renewInterval ?? this.remainingMs) / 4)));
  }

  #renewed(sentAt: number, answer: Observation): void {
    if (this.#ended) {
      this.#dropStray(answer);
      return;
    }
    if (!answer.held) {
      if (sentAt >= this.#heardAt) this.lose("taken"); // unless a newer answer confirmed the hold since
      return;
    }
    this.#confirm(sentAt, answer.pttl);
    this.#topUp = false;
    this.#cancelRenewal?.(); // a retry queued while this answer was late
    // Timed from this renewal's send, not its reply, lest each round trip push renewals past the lease.
    const renewInterval = this.#renewEvery;
    if (renewInterval !== undefined) this.#renewIn(sentAt + renewInterval - monotonicNow());
  }

  /** A renewal answered "held" after the lease was reported expired here renewed a hold that nobody has. */
  #dropStray(answer: Observation): void {
    if (answer.held && this.#lossReason === "expired") this.#releaseStray();
  }

  /**
   * Releases what a renewal or extend may have renewed after the lease expired here (its request or answer
   * late, or failed at the client yet run; the local deadline is early): else the lock is held for nobody a
   * lease (or the extend's amount) more, on a quorum too. Only a random token's: a chosen one (`uuid`) may
   * hold for another lease or process by now, whose hold this would end.
   */
  #releaseStray(): void {
    if (this.#strayReleased || this.#released || this.#c.tokens || !this.releasable) return;
    this.#strayReleased = true;
    // Sent again after a failure, as an undo is: the caller's `release()` meanwhile (from onLost, or the
    // `finally` of work the signal stopped) shares it (one command) and says false at once, the lease lost,
    // so it will not send one.
    const releasing: Promise<boolean> = undoing(() => this.#releaseAfterTries(), this.#c.lease).then(
      (sent) => {
        if (sent) this.#gone = true;
        else {
          this.#strayReleased = false; // a late answer that finds the key held again sends another
          if (this.#releasing === releasing) this.#releasing = undefined;
        }
        return false;
      },
    );
    this.#releasing = releasing;
    this.#c.background(releasing);
  }

  /**
   * Ends the lease here; `handOver` false leaves `onEnd` to the caller (a release, once answered). `ending`:
   * how, as the leases it took the hold over from are told (what their callers ended is no loss to them).
   */
  #end(handOver = true, ending: Ending = "taken"): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#cancelDeadline?.();
    this.#cancelRenewal?.();
    if (handOver) this.#c.onEnd?.();
    for (const follower of this.#followers.splice(0)) follower(ending);
  }
}

/**
 * Checks `work` before acquiring, runs it with the lease's signal and lease, then releases; a failed release
 * is ignored (the key expires) and hands the turn on.
 */
export async function runHolding<T>(
  work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
  acquire: () => Promise<Lease>,
): Promise<T> {
  check("work", work, "function", true);
  const lease = await acquire();
  return lease.run(work);
}

/** Redis's silence: no reply to `operation` within `waited` ms. */
function silence(lockId: string, operation: "release" | "extend" | "status", waited: number): LockRedisError {
  return new LockRedisError(lockId, operation, new InstanceTimeoutError(lockId, operation, waited));
}

/** Whether Redis refused a request because the key is of another type (WRONGTYPE): no lock's, no token's. */
function notALock(error: unknown): boolean {
  return error instanceof LockRedisError && error.refused && /\bWRONGTYPE\b/.test(error.reason);
}

/** Runs `check` on each read of `signal`, so a deadline missed in a stall shows; stays a real AbortSignal. */
function deadlineAware(signal: AbortSignal, check: () => void): void {
  try {
    for (const name of ["aborted", "reason", "throwIfAborted"] as const) {
      const { get, value } = Object.getOwnPropertyDescriptor(AbortSignal.prototype, name) ?? {};
      const read = (get ?? value) as (() => unknown) | undefined;
      if (!read) continue;
      const checked = () => {
        check();
        return read.call(signal);
      };
      Object.defineProperty(signal, name, { [get ? "get" : "value"]: checked, configurable: true });
    }
  } catch {
    // A frozen signal: the timer alone reports the loss.
  }
}
