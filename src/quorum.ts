import type { Background } from "./background";
import { clockDriftAllowance, monotonicNow } from "./clock";
import { connectTarget } from "./connect";
import { type InstanceFailure, InstanceTimeoutError, type LockOperation, LockRedisError } from "./errors";
import { newCallId } from "./ids";
import { QUORUM, type QuorumSpec } from "./options";
import { overdue, TIMED_OUT, within } from "./race";
import { assertRedisClient, type RedisClient } from "./redis/client";
import { isConnectionRefused } from "./redis/failure";
import {
  type HoldCall,
  type LockStore,
  NOT_HELD,
  type Observation,
  refusedOutright,
  type Take,
  type TakeRequest,
} from "./store";
import { describeValue } from "./validate";
import type { FeedEvent, Listening, LockEvents } from "./wake/feed";
import { SubscribedWaiter } from "./wake/subscribed";

/**
 * What a round heard: each member's value (undefined: it failed, or had not answered), the failures, and how
 * many values were for it (`ayes`) and against (`noes`).
 */
interface Heard<T> {
  readonly values: readonly (T | undefined)[];
  readonly failures: InstanceFailure[];
  readonly ayes: number;
  readonly noes: number;
}
/** Each member's request of one kind (by index), for another to follow. */
type Requests = readonly Promise<unknown>[];
/** Observes on `permit`, where a look round may just have found a hold with `pttl` left. */
type ObserveOn = (permit: number | undefined, pttl?: number) => Promise<Observation>;
/** By token (or round): each member's requests of one kind still in flight. */
type Landing = Map<string, Requests>;

// A frozen member (or a client queueing while it reconnects) may cost a round a third of the lease, never all
// of it: an acquisition keeps two thirds, and a renewal sent a third before the deadline settles in time.
const INSTANCE_WAIT_SHARE_OF_LEASE = 1 / 3;

/**
 * A quorum of independent Redis instances for `redis`: the lock (or semaphore) is held only while a majority
 * of them hold it (Redlock). Give an odd number of clients, each on a separate Redis, with no replication.
 * @example
 * const lock = new Lock({ id: "nightly-report", redis: quorum([a, b, c]), lease: 30_000 });
 * @throws {TypeError | RangeError} when `clients` is not an odd number of Redis clients.
 */
export function quorum(given: readonly RedisClient[]): QuorumSpec {
  const expected =
    "Expected `quorum()` to get an odd number of independent clients (so that a majority exists)";
  if (!Array.isArray(given)) throw new TypeError(`${expected}, got ${describeValue(given)}`);
  const clients = Object.freeze([...given]); // checked and used as given now, whatever changes the caller's
  if (clients.length % 2 === 0) throw new RangeError(`${expected}, got an array of ${clients.length}`);
  for (const [index, client] of clients.entries()) {
    assertRedisClient(`quorum()[${index}]`, client);
    // One client twice is one server voting twice: a "majority" of it alone.
    const first = clients.indexOf(client);
    if (first !== index) throw new RangeError(`${expected}, got the client at ${first} again at ${index}`);
  }
  return {
    [QUORUM]: true,
    clients,
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

const majorityOf = (members: number) => Math.floor(members / 2) + 1;

/** Settles like `request`, sent once `earlier` settled. */
const after = <T>(earlier: Promise<unknown> | undefined, request: () => Promise<T>) =>
  Promise.resolve(earlier)
    .catch(() => undefined)
    .then(request);

const holds = (seen: Observation) => seen.held;

const isFailure = (answer: unknown): answer is InstanceFailure["error"] => answer instanceof Error;

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
  const minority = members.length - majority;
  /** By token: each member's take of the last round, which a release of that token must follow. */
  const takes: Landing = new Map();
  /** By token: each member's release still in flight, which a take of that token must follow. */
  const releases: Landing = new Map();
  /** By round: each member's take still in flight, which an undo of that round must follow. */
  const inFlight: Landing = new Map();
  /** The request id of the round of the try `nonce` for `permit` (0: a lock's only round). */
  const roundId = (nonce: string, permit: number) => (permit === 0 ? nonce : `${nonce}~${permit}`);
  const following = <T>(earlier: Requests | undefined, request: (member: LockStore) => Promise<T>) =>
    members.map((member, index) => after(earlier?.[index], () => request(member)));
  // Records `key`'s requests per member, with any of that kind still landing, for the other kind to follow:
  // a release follows each take of the acquiring round, a take each release (a late one would delete it),
  // an undo each take of its round.
  const remember = (kind: Landing, key: string, requests: Requests) => {
    const earlier = kind.get(key);
    const all = requests.map((request, index) => Promise.allSettled([earlier?.[index], request]));
    kind.set(key, all);
    void Promise.allSettled(all).then(() => kind.get(key) === all && kind.delete(key));
  };
  /**
   * Releases `token` on each member, after its take of the acquiring round, so a grant that lands late is
   * released too; a take of the token follows these. With no take landing, members `free` says hold nothing
   * are left alone.
   */
  const releaseEach = (
    token: string,
    lease: number,
    permit?: number,
    free = (_member: number) => false,
    call?: HoldCall,
  ) => {
    const landing = takes.get(token);
    takes.delete(token);
    const requests = members.map((member, index) =>
      !landing && free(index)
        ? Promise.resolve(false)
        : after(landing?.[index], () => member.release(token, lease, permit, call)),
    );
    remember(releases, token, requests);
    return requests;
  };
  // Decided by a majority of yes, or more than a minority of no, or of failures. A mix of no and failures
  // waits for the rest, which tell contention from an outage.
  const decided = ({ ayes, noes, failures }: Heard<unknown>) =>
    ayes >= majority || noes > minority || failures.length > minority;
  // Resolves once the answers so far are `decided`, or all came (each bounded); the rest finish in the
  // background. `ayes` counts the yes when not every yes is alike (a look round's: one permit's holders).
  const ask = <T>(
    operation: LockOperation,
    lease: number,
    requests: readonly Promise<T>[],
    yes: (value: T) => boolean,
    ayes = (values: readonly (T | undefined)[]) =>
      values.filter((value) => value !== undefined && yes(value)).length,
  ) => {
    const limit = Math.max(1, Math.floor(lease * INSTANCE_WAIT_SHARE_OF_LEASE));
    const answers: (T | InstanceFailure["error"] | undefined)[] = requests.map(() => undefined);
    background.add(Promise.allSettled(requests));
    const sentAt = monotonicNow();
    // A waiting caller's own bound keeps the process alive. Unanswered when the bound ran out `overdue` (this
    // process stalled; the request may not have left), a member gets its bound again: no outage of its.
    const answer = (request: Promise<T>) =>
      within(request, limit, () => {}, false).then((value) =>
        value === TIMED_OUT && overdue(sentAt, limit) ? within(request, limit, () => {}, false) : value,
      );
    return new Promise<Heard<T>>((resolve) => {
      let answered = 0;
      requests.forEach((request, index) => {
        answer(request)
          .then(
            (value) => (value === TIMED_OUT ? new InstanceTimeoutError(lockId, operation, limit) : value),
            (error: unknown) =>
              error instanceof LockRedisError ? error : new LockRedisError(lockId, operation, error),
          )
          .then((answer) => {
            answers[index] = answer;
            const values = answers.map((each) => (isFailure(each) ? undefined : each));
            const heard: Heard<T> = {
              values,
              failures: answers.flatMap((error, instance) => (isFailure(error) ? [{ instance, error }] : [])),
              ayes: ayes(values),
              noes: values.filter((value) => value !== undefined && !yes(value)).length,
            };
            if (++answered === requests.length || decided(heard)) resolve(heard);
          });
      });
    });
  };
  /**
   * Throws when failed members could have made the majority (the round's did not make one): an outage, not
   * contention; a LockRedisError that names each.
   */
  const outage = (operation: LockOperation, { ayes, failures: instances }: Heard<unknown>) => {
    if (instances.length === 0 || ayes + instances.length < majority) return;
    const summary = instances.map(
      ({ instance, error }) =>
        `#${instance}: ${error instanceof LockRedisError ? error.reason : error.message}`,
    );
    // Refused only when refusals alone leave no majority: a refusing minority fails like one that is down,
    // and the others may still grant once a holder is gone.
    const refused = instances.filter(({ error }) => refusedOutright(error)).length > minority;
    const cause = new AggregateError(
      instances.map((failure) => failure.error),
      `${instances.length} of ${members.length} instances failed: ${summary.join("; ")}`,
    );
    throw new LockRedisError(lockId, operation, cause, { refused, instances });
  };
  const observe = async (
    operation: LockOperation,
    lease: number,
    token: string,
    permit: number | undefined,
    hold: string | undefined,
    request: (member: LockStore) => Promise<Observation>,
  ): Promise<Observation> => {
    const heard = await ask(operation, lease, members.map(request), holds);
    const pttls = heard.values.flatMap((seen) => (seen?.held ? [seen.pttl] : []));
    if (heard.ayes >= majority) return { held: true, pttl: Math.min(...pttls) };
    outage(operation, heard);
    // The holder's renewal or extend (not a status check) found it lost on a majority: members that may hold
    // it (said so, did not answer, or a take is landing) let go now, each after its take: of its own hold
    // only, as its release would (a late copy must not end a newer hold of the token, another process's).
    if (operation === "status") return NOT_HELD;
    const free = (member: number) => heard.values[member]?.held === false;
    const letGo = releaseEach(token, lease, permit, free, { id: newCallId(), hold: hold ?? "" });
    background.add(Promise.allSettled(letGo));
    return NOT_HELD;
  };
  /** The permit most members found the token holding (undefined: none), with the lease left on each. */
  const mostHeld = (values: readonly (Observation | undefined)[]) => {
    const byPermit = new Map<number | undefined, number[]>([[undefined, []]]);
    for (const seen of values)
      if (seen?.permit !== undefined)
        byPermit.set(seen.permit, [...(byPermit.get(seen.permit) ?? []), seen.pttl]);
    return [...byPermit].reduce((most, each) => (each[1].length > most[1].length ? each : most));
  };
  /**
   * The permit a semaphore lease that knows none (`Semaphore.permit(uuid)`) holds, by a look round: one that
   * a majority finds the token holding, with its shortest lease left; undefined when none. Keys of it on
   * different permits of different members (a failed round's leftovers) are no majority: counted as one,
   * `limit` + 1 holders would form. Asked anew each time: the uuid may since hold another permit.
   */
  const majorityPermit = async (token: string, lease: number) => {
    const looks = members.map((member) => member.status(token, lease, undefined, false));
    // The ayes are one permit's holders: holders on a mix of permits wait for the rest.
    const heard = await ask("status", lease, looks, holds, (values) => mostHeld(values)[1].length);
    const [permit, pttls] = mostHeld(heard.values);
    if (heard.ayes >= majority) return { permit, pttl: Math.min(...pttls) };
    outage("status", heard);
    return undefined;
  };
  /** Observes on the lease's permit; one that knows none on a semaphore, on the permit a majority holds. */
  const onPermit = async (token: string, lease: number, known: number | undefined, observeOn: ObserveOn) => {
    if (!(permits > 1 && known === undefined)) return observeOn(known);
    const found = await majorityPermit(token, lease);
    return found ? observeOn(found.permit, found.pttl) : NOT_HELD;
  };
  const round = async (request: TakeRequest, permit: number): Promise<Take> => {
    const { token, lease } = request;
    const nonce = roundId(request.nonce, permit); // own id: an undo never frees another round's permit
    const sentAt = monotonicNow();
    const requests = following(releases.get(token), (member) =>
      member.take({ ...request, nonce, fencing: undefined, queue: undefined, permit }),
    );
    remember(inFlight, nonce, requests);
    const heard = await ask("acquire", lease, requests, (take) => take.kind === "acquired");
    const acquired = heard.ayes >= majority && sentAt + lease - clockDriftAllowance(lease) > monotonicNow();
    if (acquired) remember(takes, token, requests);
    // Undone by the round's id, as on one server: if it failed, what each member took or may yet take, so the
    // next one starts clean; if not, a take that failed, which may still run (a copy its client gave up on),
    // lest it take the key after the release went by. The hold stands on the members that granted.
    // Beside a majority that granted, a member's undo is sent once: one down would hold each acquisition's
    // background work (and a platform's `waitUntil`) for the undo's retries. A member whose connection was
    // refused is not undone at all (`mayHaveRun` in store.ts): its take reached nothing.
    requests.forEach((take, index) => {
      const undo = () => (members[index] as LockStore).undo(token, nonce, acquired ? 0 : lease);
      background.add(
        take.then(
          (result) => (acquired || result.kind === "held" ? undefined : undo()),
          (error: unknown) =>
            (acquired && refusedOutright(error)) || isConnectionRefused(error) ? undefined : undo(),
        ),
      );
    });
    if (acquired) {
      // Gone where the answers that decided the round show a majority made the hold anew (another owner
      // may have had it since); a member slow to answer is not waited for (review helper-164: up to a third
      // of the lease more, past a short timeout). A semaphore's round looks at one permit only.
      const made = heard.values.filter((take) => take?.kind === "acquired" && take.kept === false).length;
      const kept = made < majority || (permit ? undefined : false);
      return { kind: "acquired", fencingToken: undefined, permit: permit || 1, hold: nonce, kept };
    }
    // A majority that granted too late for its lease (the process stalled meanwhile) is none, and says so:
    // no outage, though others failed.
    // A member told a later try of the token holds grants the round sent again at once (`after`): undecided,
    // no outage yet beside a member that failed; the next round decides (review helper-218).
    const after = heard.values.some((take) => take?.kind === "held" && take.after) || undefined;
    if (heard.ayes < majority && !after) outage("acquire", heard);
    const waits = heard.values.flatMap((take) =>
      take?.kind === "held" && take.pttl >= 0 ? [take.pttl] : [],
    );
    const pttl = waits.length > 0 ? Math.min(...waits) : -1;
    return { kind: "held", pttl, failures: heard.failures, late: heard.ayes >= majority || undefined, after };
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
        // Nor once its caller gave up on the try: a round then could take a permit for nobody (review helper-168).
        if (step > 0 && (monotonicNow() >= roundsUntil || request.abandoned?.())) break;
        try {
          last = await round(request, ((start + step) % permits) + 1);
        } catch (error) {
          outage = error;
        }
      }
      if (last.kind === "held" && outage !== undefined) throw outage;
      return last.kind === "held" ? { ...last, partial: true } : last;
    },
    async undo(token, nonce, lease, permit) {
      // No permit taken (the try failed, or its answer is unknown): every round undid itself; a second undo
      // would send each member another, with its re-sends (review helper-168).
      if (permit === undefined) return;
      const id = permits === 1 ? nonce : roundId(nonce, permit ?? 0);
      // Each undo follows its take: one overtaking it would undo nothing, and the take would hold for nobody.
      await Promise.all(following(inFlight.get(id), (member) => member.undo(token, id, lease)));
    },
    async release(token, lease, permit, call) {
      const heard = await ask("release", lease, releaseEach(token, lease, permit, undefined, call), Boolean);
      if (heard.ayes >= majority) return true;
      outage("release", heard);
      return false;
    },
    extend: (token, amount, lease, known, call) =>
      onPermit(token, lease, known, (permit) =>
        observe("extend", lease, token, permit, call?.hold, (member) =>
          member.extend(token, amount, lease, permit, call),
        ),
      ),
    renew: (token, lease, known, confirm, hold) =>
      onPermit(token, lease, known, (permit) =>
        observe("renew", lease, token, permit, hold, (member) =>
          member.renew(token, lease, permit, confirm, hold),
        ),
      ),
    // Looks first, and confirms only a hold found on a majority: confirming members that hold on a vote of
    // FREE would keep a same-token round failing there from being undone, held a lease for nobody.
    status: (token, lease, known, confirm = true, hold = "") =>
      onPermit(token, lease, known, async (permit, pttl) => {
        const look = (confirming: boolean) =>
          observe("status", lease, token, permit, hold, (member) =>
            member.status(token, lease, permit, confirming, hold),
          );
        // A permit just found on a majority was the look.
        const seen = pttl === undefined ? await look(false) : { held: true, pttl };
        return seen.held && confirm ? look(true) : seen;
      }),
  };
}

/**
 * One member's announcements not yet counted in one of the lock's (when each came), those it owes, and
 * whether its newest is a release read as a late copy of an owed one, which may be a new one instead.
 */
interface Uncounted {
  released: number[];
  acquired: number[];
  owed: Owed[];
  doubted: boolean;
}

/** An announcement of the lock's a member has not made yet, and until when its copy is taken for late. */
interface Owed {
  readonly event: FeedEvent;
  readonly until: number;
}

/**
 * How long a member's copy of an announcement may come after the majority's and still be taken for a copy,
 * in ms: the spread of one round's requests over the members, with a wide margin. Later, it counts as new.
 * Also how recent other members' uncounted announcements must be to make such a copy new (older: strays).
 */
const OWED_MS = 1_000;

/**
 * The members' announcements as the quorum's: a release (or acquisition) is the lock's once a majority of
 * members announced one not yet counted in an earlier one of the lock's. One member's alone is none of the
 * lock's (a round's take of a minority undone, a stray hold), and would wake a wait to no purpose: a round
 * taking a free member beside a majority holder, then undoing it, would wake itself again and again.
 * A member's copy that comes after the majority's is not counted again; a release that may be such a copy
 * or a new one still counts with other members' copies of a new one. Covered once a majority listens.
 */
function combined(all: readonly LockEvents[], members: number): LockEvents {
  const majority = majorityOf(members);
  const events: LockEvents = {
    waiter: (plan) => new SubscribedWaiter(events, plan),
    active: () => all.every((each) => each.active()), // free to join: listening subscribes on every member
    cost: () => Math.max(...all.map((each) => each.cost())), // a round's commands per member, as a try's
    listen: (onEvent, signal) =>
      new Promise((resolve) => {
        const stopAll = new AbortController();
        signal.addEventListener("abort", () => stopAll.abort(), { once: true });
        const listenings: Listening[] = [];
        const stop = () => {
          stopAll.abort();
          for (const each of listenings.splice(0)) each.stop();
        };
        let settled = false;
        const settle = (listening: Listening | undefined) => {
          settled = true;
          resolve(listening);
        };
        // Per member, when it made its announcements not yet part of one of the lock's, and those of the lock's
        // it has not announced yet (`owed`, oldest first, each for OWED_MS). A member's own announcements come in order,
        // so its next one within that time either is an owed copy, late (counted once already: a duplicate
        // "acquired" after a release would cancel the release's wake-up), or shows it missed those owed before
        // it (restarted without the hold): it must not stay behind the others for good, nor, past that time
        // or when it completes a majority with the others' uncounted ones, have a new announcement taken for
        // a copy of one it missed.
        const heard: Uncounted[] = all.map(() => ({ released: [], acquired: [], owed: [], doubted: false }));
        const hear = (counts: Uncounted) => (heardEvent: FeedEvent) => {
          // How many permits a member's acquisition left free is its own: the majority counts acquisitions.
          const event = heardEvent.startsWith("acquired:") ? "acquired" : heardEvent;
          // One member's subscription broke: the majority it counted in is gone, so the whole one ends (before
          // it was confirmed, it fails instead: a broken member must not count towards the majority).
          if (event === "ended") {
            if (stopAll.signal.aborted) return;
            stop();
            return settled ? onEvent(event) : settle(undefined);
          }
          if (event !== "released" && event !== "acquired") return onEvent(event);
          const now = monotonicNow();
          counts.doubted = false; // its newer announcement says what came after
          // Its takes not yet counted ended with this release (an undone round's, a stray's): counted with a
          // late copy of another member's, they would make an acquisition that cancels a release's wake-up.
          if (event === "released") counts.acquired = [];
          const owed = counts.owed.filter((debt) => debt.until > now);
          const late = owed.findIndex((debt) => debt.event === event); // -1: it missed every one it owed
          counts.owed = late >= 0 ? owed.slice(late + 1) : [];
          // Counted, it would make a majority with others' recent uncounted ones: new, not a copy of an owed
          // one. (Older ones were a minority's, strays; they still count towards a majority, as a slow copy.)
          const recent = (each: Uncounted) =>
            (each[event].at(-1) ?? Number.NEGATIVE_INFINITY) > now - OWED_MS;
          const others = heard.filter((each) => each !== counts && recent(each)).length;
          // Or it missed the owed one and this is the lock's next release, its other copies still to come:
          // held in doubt, it counts with them (at worst, one try too many; an "acquired" counted twice
          // would cancel a release's wake-up instead, so only a release is held).
          if (late >= 0 && others + 1 < majority) counts.doubted = event === "released";
          else if (counts[event].push(now) > 8) counts[event].shift(); // strays, bounded
          const uncounted = heard.filter((each) => each[event].length > 0).length;
          if (uncounted < majority) {
            // With releases in doubt, a majority may be free: wake, but count nothing and owe nothing (a late
            // copy in doubt must not spend others' announcements, nor make one a debt that absorbs it).
            const doubted = event === "released" ? heard.filter((each) => each.doubted) : [];
            if (doubted.length === 0 || uncounted + doubted.length < majority) return;
            for (const each of doubted) each.doubted = false; // one wake-up each, at most
            return onEvent(event);
          }
          for (const each of heard) {
            // The newest: what made this majority; an older one (a stray) stays old, as `recent` reads it.
            if (each[event].pop() === undefined && each.owed.push({ event, until: now + OWED_MS }) > 8)
              each.owed.shift();
          }
          onEvent(event);
        };
        let pending = all.length;
        let since = Number.NEGATIVE_INFINITY;
        heard.forEach((counts, member) => {
          void (all[member] as LockEvents).listen(hear(counts), stopAll.signal).then((listening) => {
            pending -= 1;
            if (listening && stopAll.signal.aborted) listening.stop();
            else if (listening) {
              listenings.push(listening);
              since = Math.max(since, listening.since);
              if (listenings.length === majority) settle({ stop, since });
            }
            if (pending === 0 && listenings.length < majority && !settled) {
              stop();
              settle(undefined);
            }
          });
        });
      }),
  };
  return events;
}
