import { clockDriftAllowance } from "../drift";
import { type InstanceFailure, type LockOperation, LockRedisError } from "../errors";
import type { RenewalOutcome } from "../hold";
import { monotonicNow } from "../timers";
import type { LockEvent } from "../wake/release-channel";
import type { StopListening } from "../wake/release-feed";
import type { AttemptResult, LockStore, Observation } from "./lock-store";
import type { SingleStore } from "./single-store";
import { within } from "./within";

type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * A lock held on a majority of N independent Redis instances (the Redlock scheme). An
 * acquisition counts only when a majority granted it and time is left of the lease after the
 * round trip and the clock-drift allowance; otherwise every instance that may have granted it is
 * released before the next attempt. Every other operation is decided by majority vote.
 */
export class QuorumStore implements LockStore {
  readonly #lockId: string;
  readonly #instances: readonly SingleStore[];
  readonly #majority: number;
  /** Longest wait for one instance's reply, in milliseconds. */
  readonly #requestLimit: number;

  constructor(lockId: string, instances: readonly SingleStore[], requestLimitMs: number) {
    this.#lockId = lockId;
    this.#instances = instances;
    this.#majority = Math.floor(instances.length / 2) + 1;
    this.#requestLimit = requestLimitMs;
  }

  async attempt(token: string, lease: number): Promise<AttemptResult> {
    const sentAt = monotonicNow();
    const results = await Promise.all(
      this.#instances.map((instance) =>
        within(instance.attempt(token, lease, false), Math.min(lease, this.#requestLimit), (late) => {
          // A grant that arrives after its time is up is released, not kept.
          late.then(
            (result) => {
              if (result.kind !== "held") void this.#releaseQuietly(instance, token);
            },
            () => {},
          );
        }).catch(
          (error: unknown): AttemptResult => ({
            kind: "error",
            error: this.#instanceError("acquire", error),
          }),
        ),
      ),
    );
    const granted = results.filter((result) => result.kind === "acquired").length;
    const timeLeft = sentAt + lease - clockDriftAllowance(lease) - monotonicNow();
    if (granted >= this.#majority && timeLeft > 0) return { kind: "acquired", fencingToken: undefined };

    // Not enough: take back what this round may have taken, so the next round starts clean.
    await Promise.all(
      this.#instances.map((instance, index) =>
        results[index]?.kind === "held" ? undefined : this.#releaseQuietly(instance, token),
      ),
    );
    const failures = results.flatMap((result, instance) =>
      result.kind === "error" ? [{ instance, error: result.error }] : [],
    );
    if (failures.length > this.#instances.length - this.#majority) {
      return {
        kind: "error",
        error: LockRedisError.fromInstances(this.#lockId, "acquire", failures, this.#instances.length),
      };
    }
    const waits = results.flatMap((result) =>
      result.kind === "held" && result.pttl >= 0 ? [result.pttl] : [],
    );
    return { kind: "held", pttl: waits.length > 0 ? Math.min(...waits) : -1, failures };
  }

  async release(token: string): Promise<boolean> {
    return this.#decide("release", await this.#ask("release", (instance) => instance.release(token)));
  }

  async extend(token: string, amount: number): Promise<Observation> {
    return this.#observe("extend", await this.#ask("extend", (instance) => instance.extend(token, amount)));
  }

  async status(token: string): Promise<Observation> {
    return this.#observe("status", await this.#ask("status", (instance) => instance.status(token)));
  }

  async renew(token: string, lease: number): Promise<RenewalOutcome> {
    const answers = await this.#ask("renew", (instance) => instance.renew(token, lease));
    const renewed = answers.map((answer) =>
      answer.ok ? { ok: true as const, value: answer.value === "renewed" } : answer,
    );
    return this.#decide("renew", renewed) ? "renewed" : "not-held";
  }

  async listenForEvents(
    onEvent: (event: LockEvent) => void,
    signal: AbortSignal,
  ): Promise<StopListening | undefined> {
    const stops = await Promise.all(
      this.#instances.map((instance) => instance.listenForEvents(onEvent, signal)),
    );
    const active = stops.filter((stop): stop is StopListening => stop !== undefined);
    if (active.length === 0) return undefined;
    return () => {
      for (const stop of active) stop();
    };
  }

  #ask<T>(operation: LockOperation, request: (instance: SingleStore) => Promise<T>): Promise<Answer<T>[]> {
    return Promise.all(
      this.#instances.map((instance) =>
        within(request(instance), this.#requestLimit, (late) => {
          late.catch(() => {});
        }).then(
          (value): Answer<T> => ({ ok: true, value }),
          (error: unknown): Answer<T> => ({ ok: false, error: this.#instanceError(operation, error) }),
        ),
      ),
    );
  }

  /** True with a majority of yes, false when the yes plus the unknown cannot make one; else throws. */
  #decide(operation: LockOperation, answers: readonly Answer<boolean>[]): boolean {
    const yes = answers.filter((answer) => answer.ok && answer.value).length;
    if (yes >= this.#majority) return true;
    const failures: InstanceFailure[] = answers.flatMap((answer, instance) =>
      answer.ok ? [] : [{ instance, error: answer.error }],
    );
    if (yes + failures.length < this.#majority) return false;
    throw LockRedisError.fromInstances(this.#lockId, operation, failures, this.#instances.length);
  }

  /** A majority's view: held when a majority holds the token, for as long as the shortest of them. */
  #observe(operation: LockOperation, answers: readonly Answer<Observation>[]): Observation {
    const held = this.#decide(
      operation,
      answers.map((answer) => (answer.ok ? { ok: true as const, value: answer.value.held } : answer)),
    );
    const pttls = answers.flatMap((answer) => (answer.ok && answer.value.held ? [answer.value.pttl] : []));
    return { held, pttl: held ? Math.min(...pttls) : -2 };
  }

  #instanceError(operation: LockOperation, error: unknown): LockRedisError {
    return error instanceof LockRedisError ? error : new LockRedisError(this.#lockId, operation, error);
  }

  async #releaseQuietly(instance: SingleStore, token: string): Promise<void> {
    try {
      await instance.release(token);
    } catch {
      // Best effort: the lease bounds how long this instance keeps the key.
    }
  }
}
