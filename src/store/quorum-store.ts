import { clockDriftAllowance, monotonicNow } from "../clock";
import { type InstanceFailure, InstanceTimeoutError, type LockOperation, LockRedisError } from "../errors";
import { TIMED_OUT, within } from "../race";
import type { FeedEvent, Listening, StopListening } from "../wake/feed-types";
import type { AttemptResult, LockStore, Observation } from "./lock-store";

type Failure = LockRedisError | InstanceTimeoutError;
type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Failure };
/** Answers of one round, by instance; undefined where the instance had not answered when it settled. */
type Answers<T> = readonly (Answer<T> | undefined)[];

/**
 * The longest one instance is waited for, as a share of the lease in play: a frozen or
 * black-holed member (or a client queueing commands while it reconnects) must cost a round a
 * fraction of the lease, never all of it. A third leaves an acquisition at least two thirds of its
 * lease, and lets a renewal sent a third of the lease before the deadline (auto-extend's default
 * interval) settle in time.
 */
const INSTANCE_WAIT_SHARE_OF_LEASE = 1 / 3;

/**
 * A lock held on a majority of N independent Redis instances (the Redlock scheme). Every round
 * goes to all instances at once and settles as soon as its outcome is decided: a majority agreed,
 * or so many refused or failed that no majority is possible. An acquisition counts only when a
 * majority granted it with time left of the lease after the round trip and the clock-drift
 * allowance; when it fails, every instance that may have granted it, late ones included, is
 * released. After a success, late grants stay: renewals and the release reach every instance.
 */
export class QuorumStore implements LockStore {
  readonly #lockId: string;
  readonly #instances: readonly LockStore[];
  readonly #majority: number;
  /** Permits per instance: 1 for a lock. */
  readonly #permits: number;
  /** Where background clean-up goes (the release of late grants after a failed round). */
  readonly #background: (work: Promise<unknown>) => void;

  constructor(
    lockId: string,
    instances: readonly LockStore[],
    background: (work: Promise<unknown>) => void,
    permits = 1,
  ) {
    this.#lockId = lockId;
    this.#instances = instances;
    this.#permits = permits;
    this.#majority = Math.floor(instances.length / 2) + 1;
    this.#background = background;
  }

  get canListen(): boolean {
    return this.#instances.some((instance) => instance.canListen);
  }

  readonly fair = false;

  async leaveQueue(): Promise<void> {
    // A quorum has no fair queue: there would be one per instance, with no single order.
  }

  /**
   * One try. A lock is one round; a semaphore tries its permits one by one, from a random one,
   * each a round of its own, until a majority grants the same permit: two majorities always share
   * an instance, where a permit holds one token, so no more holders than permits can form.
   */
  async attempt(token: string, lease: number): Promise<AttemptResult> {
    if (this.#permits === 1) return this.#round(token, lease, 0);
    const start = Math.floor(Math.random() * this.#permits);
    let last: AttemptResult = { kind: "held", pttl: -1 };
    for (let step = 0; step < this.#permits; step++) {
      last = await this.#round(token, lease, ((start + step) % this.#permits) + 1);
      if (last.kind !== "held") return last;
    }
    return last;
  }

  async #round(token: string, lease: number, onlyPermit: number): Promise<AttemptResult> {
    const sentAt = monotonicNow();
    const requests = this.#instances.map((instance) =>
      instance.attempt(token, lease, undefined, undefined, onlyPermit),
    );
    const answers = await this.#ask("acquire", requests, lease, (so) => {
      const granted = so.filter((answer) => answer?.ok && answer.value.kind === "acquired").length;
      const refused = so.filter(
        (answer) => answer && !(answer.ok && answer.value.kind === "acquired"),
      ).length;
      return granted >= this.#majority || refused > this.#instances.length - this.#majority;
    });
    const granted = answers.filter((answer) => answer?.ok && answer.value.kind === "acquired").length;
    const timeLeft = sentAt + lease - clockDriftAllowance(lease) - monotonicNow();
    if (granted >= this.#majority && timeLeft > 0) return { kind: "acquired", fencingToken: undefined };

    // Not enough: take back whatever this round took or may yet take, so the next round starts clean.
    await this.#releaseGrants(token, lease, requests, answers);
    const failures = this.#failures(
      answers.map((answer): Answer<AttemptResult> | undefined =>
        answer?.ok && answer.value.kind === "error" ? { ok: false, error: answer.value.error } : answer,
      ),
    );
    if (failures.length > this.#instances.length - this.#majority) {
      return {
        kind: "error",
        error: LockRedisError.fromInstances(this.#lockId, "acquire", failures, this.#instances.length),
      };
    }
    const refusals = answers.flatMap((answer) =>
      answer?.ok && answer.value.kind === "held" ? [answer.value] : [],
    );
    const waits = refusals.flatMap((refusal) => (refusal.pttl >= 0 ? [refusal.pttl] : []));
    // One holder everywhere it was seen, or none known.
    const holders = new Set(refusals.map((refusal) => refusal.holder));
    const holder = holders.size === 1 ? [...holders][0] : undefined;
    return { kind: "held", pttl: waits.length > 0 ? Math.min(...waits) : -1, holder, failures };
  }

  async release(token: string, lease: number): Promise<boolean> {
    return this.#vote("release", lease, (instance) => instance.release(token, lease));
  }

  async extend(token: string, amount: number, lease: number): Promise<Observation> {
    return this.#observe("extend", lease, (instance) => instance.extend(token, amount, lease));
  }

  async status(token: string, lease: number): Promise<Observation> {
    return this.#observe("status", lease, (instance) => instance.status(token, lease));
  }

  async renew(token: string, lease: number): Promise<Observation> {
    return this.#observe("renew", lease, (instance) => instance.renew(token, lease));
  }

  /**
   * Listens on every instance (a release is announced on each) and resolves as soon as one
   * subscription is active; the others join when they become active. Undefined when none can.
   */
  listenForEvents(
    onEvent: (event: FeedEvent) => void,
    signal: AbortSignal,
    replaySince?: number,
  ): Promise<Listening | undefined> {
    const stopAll = new AbortController();
    const stops: StopListening[] = [];
    const stop = () => {
      stopAll.abort();
      for (const each of stops.splice(0)) each();
    };
    const onAbort = () => stop();
    signal.addEventListener("abort", onAbort, { once: true });
    return new Promise((resolve) => {
      let pending = this.#instances.length;
      for (const instance of this.#instances) {
        instance.listenForEvents(onEvent, stopAll.signal, replaySince).then(
          (active) => {
            pending -= 1;
            if (active && stopAll.signal.aborted) active.stop();
            else if (active) {
              stops.push(active.stop);
              // The first to be active decides the coverage: every release is announced on each.
              resolve({ stop, coveredFrom: active.coveredFrom });
            }
            if (pending === 0 && stops.length === 0) {
              signal.removeEventListener("abort", onAbort);
              resolve(undefined);
            }
          },
          () => {
            pending -= 1;
            if (pending === 0 && stops.length === 0) resolve(undefined);
          },
        );
      }
    });
  }

  /**
   * After a failed round: releases every instance whose answer was not a refusal. Those that
   * answered are released before the next round (each waited for no longer than in a round);
   * those still silent are released in the background once they answer.
   */
  async #releaseGrants(
    token: string,
    lease: number,
    requests: readonly Promise<AttemptResult>[],
    answers: Answers<AttemptResult>,
  ): Promise<void> {
    const limit = this.#instanceLimit(lease);
    const releases = requests.map((request, index) => {
      const instance = this.#instances[index] as LockStore;
      const release = request
        .then(
          (result) => (result.kind === "held" ? undefined : instance.release(token, lease)),
          () => instance.release(token, lease),
        )
        .catch(() => {
          // Best effort: the lease bounds how long this instance keeps the key.
        });
      if (answers[index] === undefined) {
        this.#background(release);
        return undefined;
      }
      return within(release, limit, (late) => this.#background(late));
    });
    await Promise.all(releases);
  }

  /**
   * Sends one request per instance and resolves as soon as `decided` says the answers so far settle
   * the outcome, or every instance answered. Each instance is waited for at most a share of `lease`.
   */
  #ask<T>(
    operation: LockOperation,
    requests: readonly Promise<T>[],
    lease: number,
    decided: (answers: Answers<T>) => boolean,
  ): Promise<Answers<T>> {
    const limit = this.#instanceLimit(lease);
    const answers: (Answer<T> | undefined)[] = requests.map(() => undefined);
    return new Promise((resolve) => {
      let answered = 0;
      requests.forEach((request, index) => {
        within(request, limit, () => {})
          .then(
            (value): Answer<T> =>
              value === TIMED_OUT
                ? { ok: false, error: new InstanceTimeoutError(this.#lockId, operation, limit) }
                : { ok: true, value },
            (error: unknown): Answer<T> => ({ ok: false, error: this.#instanceError(operation, error) }),
          )
          .then((answer) => {
            answers[index] = answer;
            answered += 1;
            if (answered === requests.length || decided(answers)) resolve([...answers]);
          });
      });
    });
  }

  /** How long one instance is waited for, in milliseconds, for the lease in play. */
  #instanceLimit(lease: number): number {
    return Math.max(1, Math.floor(lease * INSTANCE_WAIT_SHARE_OF_LEASE));
  }

  /** A majority vote of yes/no answers; settles as soon as the outcome is decided. */
  async #vote(
    operation: LockOperation,
    lease: number,
    request: (instance: LockStore) => Promise<boolean>,
  ): Promise<boolean> {
    const answers = await this.#ask(operation, this.#instances.map(request), lease, (so) =>
      this.#isDecided(
        so.map((answer) => (answer?.ok ? answer.value : answer === undefined ? undefined : null)),
      ),
    );
    return this.#decide(operation, answers);
  }

  /** A majority's view: held when a majority holds the token, for as long as the shortest of them. */
  async #observe(
    operation: LockOperation,
    lease: number,
    request: (instance: LockStore) => Promise<Observation>,
  ): Promise<Observation> {
    const answers = await this.#ask(operation, this.#instances.map(request), lease, (so) =>
      this.#isDecided(
        so.map((answer) => (answer?.ok ? answer.value.held : answer === undefined ? undefined : null)),
      ),
    );
    const held = this.#decide(
      operation,
      answers.map((answer) => (answer?.ok ? { ok: true as const, value: answer.value.held } : answer)),
    );
    const pttls = answers.flatMap((answer) => (answer?.ok && answer.value.held ? [answer.value.pttl] : []));
    return { held, pttl: held ? Math.min(...pttls) : -2 };
  }

  /** Whether votes so far (true, false, null for a failure, undefined while pending) settle the outcome. */
  #isDecided(votes: readonly (boolean | null | undefined)[]): boolean {
    const yes = votes.filter((vote) => vote === true).length;
    const notYes = votes.filter((vote) => vote === false || vote === null).length;
    return yes >= this.#majority || notYes > this.#instances.length - this.#majority;
  }

  /**
   * True with a majority of yes; false when the yes plus every instance that failed or had not
   * answered still cannot make one; otherwise the outcome is unknown and this throws.
   */
  #decide(operation: LockOperation, answers: Answers<boolean>): boolean {
    const yes = answers.filter((answer) => answer?.ok && answer.value).length;
    if (yes >= this.#majority) return true;
    const unknown = answers.filter((answer) => answer === undefined || !answer.ok).length;
    if (yes + unknown < this.#majority) return false;
    throw LockRedisError.fromInstances(
      this.#lockId,
      operation,
      this.#failures(answers),
      this.#instances.length,
    );
  }

  #failures(answers: readonly (Answer<unknown> | undefined)[]): InstanceFailure[] {
    return answers.flatMap((answer, instance) =>
      answer && !answer.ok ? [{ instance, error: answer.error }] : [],
    );
  }

  #instanceError(operation: LockOperation, error: unknown): LockRedisError {
    return error instanceof LockRedisError ? error : new LockRedisError(this.#lockId, operation, error);
  }
}
