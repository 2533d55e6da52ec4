import type { Background } from "./background";
import { clockDriftAllowance, monotonicNow } from "./clock";
import { connectTarget } from "./connect";
import { type InstanceFailure, InstanceTimeoutError, type LockOperation, LockRedisError } from "./errors";
import { QUORUM, type QuorumSpec } from "./options";
import { TIMED_OUT, within } from "./race";
import { assertRedisClient, type RedisClient } from "./redis/client";
import type { LockStore, Observation, Take, TakeRequest } from "./store";
import { describeValue } from "./validate";
import type { FeedEvent, Listening, LockEvents } from "./wake/feed";
import { SubscribedWaiter } from "./wake/subscribed";

type Failure = LockRedisError | InstanceTimeoutError;
type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Failure };
/** Answers of one round, by instance; undefined where the instance had not answered when it settled. */
type Answers<T> = readonly (Answer<T> | undefined)[];

// A frozen member (or a client queueing while it reconnects) may cost a round a third of the lease, never all
// of it: an acquisition keeps two thirds, and a renewal sent a third before the deadline settles in time.
const INSTANCE_WAIT_SHARE_OF_LEASE = 1 / 3;

/** What is said of a token that holds nothing. */
const NOT_HELD: Observation = { held: false, pttl: -2 };

/**
 * A quorum of independent Redis instances for `redis`: the lock (or semaphore) is held only while a majority
 * of them hold it (Redlock). Give an odd number of clients, each on a separate Redis, with no replication.
 * @example
 * const lock = new Lock({ id: "nightly-report", redis: quorum([a, b, c]), lease: 30_000 });
 * @throws {TypeError | RangeError} when `clients` is not an odd number of Redis clients.
 */
export function quorum(clients: readonly RedisClient[]): QuorumSpec {
  const expected =
    "Expected `quorum()` to get an odd number of independent clients (so that a majority exists)";
  if (!Array.isArray(clients)) throw new TypeError(`${expected}, got ${describeValue(clients)}`);
  if (clients.length % 2 === 0) throw new RangeError(`${expected}, got an array of ${clients.length}`);
  for (const [index, client] of clients.entries()) {
    assertRedisClient(`quorum()[${index}]`, client);
    // One client twice is one server voting twice: a "majority" of it alone.
    if (clients.indexOf(client) !== index)
      throw new RangeError(`${expected}, got the client at ${clients.indexOf(client)} again at ${index}`);
  }
  return {
    [QUORUM]: true,
    clients: [...clients],
    build: (settings, make, background) => {
      const targets = clients.map((client) => connectTarget(settings, client));
      const store = quorumStore(settings.id, targets.map(make), background, make.permits ?? 1);
      // A release is announced on each member: the first active subscription decides.
      return {
        ...store,
        waiter(_token, plan) {
          const able = plan.wakeOnRelease ? targets.flatMap((target) => target.events() ?? []) : [];
          return able.length >= majorityOf(clients.length)
            ? combined(able, clients.length).waiter(plan)
            : undefined;
        },
      };
    },
  };
}

// Each round goes to all members at once and settles once decided. An acquisition counts only if a majority
// granted it with lease left; else each member that granted, or may yet, is undone by the try's request id
// (touching nothing later). After a success late grants stay: releases follow each grant.
function quorumStore(
  lockId: string,
  members: readonly LockStore[],
  background: Background,
  permits: number,
): LockStore {
  const majority = majorityOf(members.length);
  /** By token: each member's take of the last round, which a release of that token must follow. */
  const takes = new Map<string, readonly Promise<unknown>[]>();
  /** By token: each member's release still in flight, which a take of that token must follow. */
  const releases = new Map<string, readonly Promise<unknown>[]>();
  /** By round: each member's take still in flight, which an undo of that round must follow. */
  const inFlight = new Map<string, readonly Promise<unknown>[]>();
  /** The request id of the round of the try `nonce` for `permit` (0: a lock's only round). */
  const roundId = (nonce: string, permit: number) => (permit === 0 ? nonce : `${nonce}~${permit}`);
  const after = <T>(earlier: Promise<unknown> | undefined, request: () => Promise<T>) =>
    Promise.resolve(earlier)
      .catch(() => undefined)
      .then(request);
  const following = <T>(
    earlier: readonly Promise<unknown>[] | undefined,
    request: (member: LockStore) => Promise<T>,
  ) => members.map((member, index) => after(earlier?.[index], () => request(member)));
  // Records `token`'s requests per member, with any of that kind still landing, for the other kind to follow:
  // a release follows each take of the acquiring round, a take each release (a late one would delete it).
  const remember = (
    kind: Map<string, readonly Promise<unknown>[]>,
    token: string,
    requests: readonly Promise<unknown>[],
  ) => {
    const earlier = kind.get(token);
    const all = requests.map((request, index) => Promise.allSettled([earlier?.[index], request]));
    kind.set(token, all);
    void Promise.allSettled(all).then(() => kind.get(token) === all && kind.delete(token));
  };
  const minority = members.length - majority;
  // Resolves once the answers so far (undefined: pending) are `decided`, or all came (each bounded). The
  // rest finish in the background.
  const ask = <T>(
    operation: LockOperation,
    requests: readonly Promise<T>[],
    lease: number,
    decided: (answers: Answers<T>) => boolean,
  ) => {
    const limit = Math.max(1, Math.floor(lease * INSTANCE_WAIT_SHARE_OF_LEASE));
    const answers: (Answer<T> | undefined)[] = requests.map(() => undefined);
    background.add(Promise.allSettled(requests));
    return new Promise<Answers<T>>((resolve) => {
      let answered = 0;
      requests.forEach((request, index) => {
        within(request, limit, () => {})
          .then(
            (value): Answer<T> =>
              value === TIMED_OUT
                ? { ok: false, error: new InstanceTimeoutError(lockId, operation, limit) }
                : { ok: true, value },
            (error: unknown): Answer<T> => ({
              ok: false,
              error: error instanceof LockRedisError ? error : new LockRedisError(lockId, operation, error),
            }),
          )
          .then((answer) => {
            answers[index] = answer;
            if (++answered === requests.length || decided(answers)) resolve([...answers]);
          });
      });
    });
  };
  const count = <T>(answers: Answers<T>, yes: (value: T) => boolean) => {
    const ayes = answers.filter((answer) => answer?.ok && yes(answer.value)).length;
    const errors = answers.filter((answer) => answer && !answer.ok).length;
    return { ayes, errors, noes: answers.filter(Boolean).length - ayes - errors };
  };
  // Decided by a majority of yes, or more than a minority of no, or of failures. A mix of no and failures
  // waits for the rest, which tell contention from an outage.
  const byVote =
    <T>(yes: (value: T) => boolean) =>
    (answers: Answers<T>) => {
      const { ayes, noes, errors } = count(answers, yes);
      return ayes >= majority || noes > minority || errors > minority;
    };
  const failures = (answers: Answers<unknown>): InstanceFailure[] =>
    answers.flatMap((answer, instance) => (answer && !answer.ok ? [{ instance, error: answer.error }] : []));
  /** By permit: the lease left on each member that found the token holding it. */
  const holdersByPermit = (answers: Answers<Observation>) => {
    const found = new Map<number, number[]>();
    for (const answer of answers) {
      const seen = answer?.ok ? answer.value : undefined;
      if (seen?.permit !== undefined) found.set(seen.permit, [...(found.get(seen.permit) ?? []), seen.pttl]);
    }
    return [...found];
  };
  /** Too many members failed to tell: a LockRedisError that names each. */
  const failed = (operation: LockOperation, answers: Answers<unknown>) => {
    const instances = failures(answers);
    const summary = instances.map(
      ({ instance, error }) =>
        `#${instance}: ${error instanceof LockRedisError ? error.reason : error.message}`,
    );
    // Refused only when refusals alone leave no majority: a refusing minority fails like one that is down,
    // and the others may still grant once a holder is gone.
    const refusals = instances.filter(({ error }) => error instanceof LockRedisError && error.refused);
    const refused = refusals.length > minority;
    const cause = new AggregateError(
      instances.map((failure) => failure.error),
      `${instances.length} of ${answers.length} instances failed: ${summary.join("; ")}`,
    );
    return new LockRedisError(lockId, operation, cause, { refused, instances });
  };
  /** True with a majority of yes; false when the yes and unknown together cannot make one; else throws. */
  const vote = async <T>(
    operation: LockOperation,
    lease: number,
    requests: Promise<T>[],
    yes: (value: T) => boolean,
  ) => {
    const answers = await ask(operation, requests, lease, byVote(yes));
    const { ayes } = count(answers, yes);
    if (ayes >= majority) return { held: true, answers };
    if (ayes + answers.filter((answer) => !answer?.ok).length < majority) return { held: false, answers };
    throw failed(operation, answers);
  };
  const observe = async (
    operation: LockOperation,
    lease: number,
    token: string,
    permit: number | undefined,
    request: (member: LockStore) => Promise<Observation>,
  ) => {
    const { held, answers } = await vote(operation, lease, members.map(request), (value) => value.held);
    const pttls = answers.flatMap((answer) => (answer?.ok && answer.value.held ? [answer.value.pttl] : []));
    // The holder's renewal or extend (not a status check) found it lost on a majority: members that may hold
    // it (said so, did not answer, or a take is landing) let go now, each after its take.
    if (!held && operation !== "status") {
      const landing = takes.get(token);
      takes.delete(token);
      const letGo = members.map((member, index) => {
        const answer = answers[index];
        if (answer?.ok && !answer.value.held && !landing) return Promise.resolve(false);
        return after(landing?.[index], () => member.release(token, lease, permit));
      });
      remember(releases, token, letGo);
      background.add(Promise.allSettled(letGo));
    }
    return { held, pttl: held ? Math.min(...pttls) : -2 };
  };
  /**
   * The permit a semaphore lease that knows none (`Semaphore.permit(uuid)`) holds, by a look round: one that
   * a majority finds the token holding, with its shortest lease left; undefined when none. Keys of it on
   * different permits of different members (a failed round's leftovers) are no majority: counted as one,
   * `limit` + 1 holders would form. Asked anew each time: the uuid may since hold another permit.
   */
  const majorityPermit = async (token: string, lease: number) => {
    const looks = members.map((member) => member.status(token, lease, undefined, false));
    // Decided once one permit has a majority, or none can; holders on a mix of permits wait for the rest.
    const onOne = (answers: Answers<Observation>) =>
      holdersByPermit(answers).find(([, pttls]) => pttls.length >= majority);
    const answers = await ask("status", looks, lease, (heard) => {
      const { noes, errors } = count(heard, (seen) => seen.held);
      return onOne(heard) !== undefined || noes > minority || errors > minority;
    });
    const [permit, pttls = []] = onOne(answers) ?? [];
    if (permit !== undefined) return { permit, pttl: Math.min(...pttls) };
    // Failed members that could have made one permit's majority decided it: an outage, as `vote` rules.
    const failing = failures(answers).length;
    const open = holdersByPermit(answers).some(([, holders]) => holders.length + failing >= majority);
    if (failing > 0 && (open || failing >= majority)) throw failed("status", answers);
    return undefined;
  };
  /** Observes on the lease's permit; one that knows none on a semaphore, on the permit a majority holds. */
  const observeHeld = async (
    operation: LockOperation,
    lease: number,
    token: string,
    known: number | undefined,
    request: (member: LockStore, permit: number | undefined) => Promise<Observation>,
  ): Promise<Observation> => {
    const found = permits > 1 && known === undefined ? await majorityPermit(token, lease) : undefined;
    if (permits > 1 && known === undefined && !found) return NOT_HELD;
    const permit = known ?? found?.permit;
    return observe(operation, lease, token, permit, (member) => request(member, permit));
  };
  const round = async (request: TakeRequest, permit: number): Promise<Take> => {
    const { token, lease } = request;
    const nonce = roundId(request.nonce, permit); // own id: an undo never frees another round's permit
    const sentAt = monotonicNow();
    const requests = following(releases.get(token), (member) =>
      member.take({ ...request, nonce, fencing: undefined, queue: undefined, permit }),
    );
    const flying = requests.map((take) => Promise.allSettled([take]));
    inFlight.set(nonce, flying);
    void Promise.allSettled(flying).then(() => inFlight.get(nonce) === flying && inFlight.delete(nonce));
    const answers = await ask(
      "acquire",
      requests,
      lease,
      byVote((take: Take) => take.kind === "acquired"),
    );
    const { ayes } = count(answers, (take) => take.kind === "acquired");
    if (ayes >= majority && sentAt + lease - clockDriftAllowance(lease) > monotonicNow()) {
      remember(takes, token, requests);
      // A member's take that failed may still run (a copy its client gave up on): undone, as on one server,
      // lest it take the key after the release went by. The hold stands on the members that granted.
      requests.forEach((take, index) => {
        const undo = (error: unknown) =>
          error instanceof LockRedisError && error.refused
            ? undefined
            : (members[index] as LockStore).undo(token, nonce, lease);
        background.add(take.catch(undo));
      });
      return { kind: "acquired", fencingToken: undefined, permit: permit || 1 };
    }
    // Not enough: undo what this round took or may yet take, so the next one starts clean.
    requests.forEach((take, index) => {
      const undo = () => (members[index] as LockStore).undo(token, nonce, lease);
      background.add(take.then((result) => (result.kind === "held" ? undefined : undo()), undo));
    });
    // Failed members that could have made the majority decided it: an outage, as `vote` rules. (A majority
    // that granted too late for its lease, the process stalled meanwhile, is none: the next try goes.)
    const failing = failures(answers).length;
    if (failing > 0 && ayes + failing >= majority) throw failed("acquire", answers);
    const waits = answers.flatMap((answer) =>
      answer?.ok && answer.value.kind === "held" && answer.value.pttl >= 0 ? [answer.value.pttl] : [],
    );
    return { kind: "held", pttl: waits.length > 0 ? Math.min(...waits) : -1, failures: failures(answers) };
  };
  return {
    async take(request) {
      if (permits === 1) return round(request, 0);
      // A semaphore tries its permits a round each, from a random one, until a majority grants one: two
      // majorities share a member, where a permit holds one token, so no more holders than permits form.
      // A permit that failed members left undecided does not stop the others; an outage is the answer only
      // when no permit was granted.
      // Rounds start within half the lease, so the last (a third at most) is answered before the try's wait
      // for its answer ends: with slow members, `limit` rounds in a row outlasted it, and a full semaphore
      // read as an outage. The next try goes on from another permit.
      const start = Math.floor(Math.random() * permits);
      const roundsUntil = monotonicNow() + request.lease / 2;
      let last: Take = { kind: "held", pttl: -1 };
      let outage: unknown;
      for (let step = 0; step < permits && last.kind === "held"; step++) {
        if (step > 0 && monotonicNow() >= roundsUntil) break;
        try {
          last = await round(request, ((start + step) % permits) + 1);
        } catch (error) {
          outage = error;
        }
      }
      if (last.kind === "held" && outage !== undefined) throw outage;
      return last;
    },
    async undo(token, nonce, lease, permit) {
      if (permits > 1 && permit === undefined) return; // no permit taken: every round undid itself
      const id = permits === 1 ? nonce : roundId(nonce, permit ?? 0);
      // Each undo follows its take: one overtaking it would undo nothing, and the take would hold for nobody.
      await Promise.all(following(inFlight.get(id), (member) => member.undo(token, id, lease)));
    },
    async release(token, lease, permit) {
      const pending = takes.get(token);
      takes.delete(token);
      // Each member's release follows its take, so a grant that lands late is released too.
      const requests = following(pending, (member) => member.release(token, lease, permit));
      remember(releases, token, requests);
      return (await vote("release", lease, requests, Boolean)).held;
    },
    extend: (token, amount, lease, known) =>
      observeHeld("extend", lease, token, known, (member, permit) =>
        member.extend(token, amount, lease, permit),
      ),
    renew: (token, lease, known) =>
      observeHeld("renew", lease, token, known, (member, permit) => member.renew(token, lease, permit)),
    // Looks first, and confirms only a hold found on a majority: confirming members that hold on a vote of
    // FREE would keep a same-token round failing there from being undone, held a lease for nobody.
    async status(token, lease, known, confirm = true) {
      const found = permits > 1 && known === undefined ? await majorityPermit(token, lease) : undefined;
      if (permits > 1 && known === undefined && !found) return NOT_HELD;
      const permit = known ?? found?.permit;
      const ask = (confirming: boolean) =>
        observe("status", lease, token, permit, (member) => member.status(token, lease, permit, confirming));
      // A permit just found on a majority was the look.
      const seen: Observation = found ? { held: true, pttl: found.pttl } : await ask(false);
      return seen.held && confirm ? ask(true) : seen;
    },
  };
}

const majorityOf = (members: number) => Math.floor(members / 2) + 1;

/**
 * The members' announcements as the quorum's: the n-th release (or acquisition) is the lock's once a majority
 * of members announced n since listening began. One member's alone is none of the lock's (a round's take of a
 * minority undone, a stray hold), and would wake a wait to no purpose: a round taking a free member beside a
 * majority holder, then undoing it, would wake itself again and again. Covered once a majority listens.
 */
function combined(all: readonly LockEvents[], members: number): LockEvents {
  const majority = majorityOf(members);
  const events: LockEvents = {
    waiter: (plan) => new SubscribedWaiter(events, plan),
    active: () => all.filter((each) => each.active()).length >= majority,
    listen(onEvent: (event: FeedEvent) => void, signal: AbortSignal): Promise<Listening | undefined> {
      const stopAll = new AbortController();
      signal.addEventListener("abort", () => stopAll.abort(), { once: true });
      const stops: (() => void)[] = [];
      const stop = () => {
        stopAll.abort();
        for (const each of stops.splice(0)) each();
      };
      const heard = all.map(() => ({ released: 0, acquired: 0 }));
      const passed = { released: 0, acquired: 0 };
      let settle: (listening: Listening | undefined) => void = () => {};
      let settled = false;
      const hear = (member: number) => (event: FeedEvent) => {
        // One member's subscription broke: the majority it counted in is gone, so the whole one ends (before
        // it was confirmed, it fails instead: a broken member must not count towards the majority).
        if (event === "ended") {
          if (stopAll.signal.aborted) return;
          stop();
          if (settled) onEvent(event);
          else settle(undefined);
          return;
        }
        if (event !== "released" && event !== "acquired") return onEvent(event);
        (heard[member] as typeof passed)[event] += 1;
        const nth = passed[event] + 1;
        if (heard.filter((counts) => counts[event] >= nth).length < majority) return;
        passed[event] = nth;
        onEvent(event);
      };
      return new Promise((resolve) => {
        settle = (listening) => {
          settled = true;
          resolve(listening);
        };
        let pending = all.length;
        let since = Number.NEGATIVE_INFINITY;
        for (const [member, each] of all.entries()) {
          void each.listen(hear(member), stopAll.signal).then((listening) => {
            pending -= 1;
            if (listening && stopAll.signal.aborted) listening.stop();
            else if (listening) {
              stops.push(() => listening.stop());
              since = Math.max(since, listening.since);
              if (stops.length === majority) settle({ stop, since });
            }
            if (pending === 0 && stops.length < majority && !settled) {
              stop();
              settle(undefined);
            }
          });
        }
      });
    },
  };
  return events;
}
