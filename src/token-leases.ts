import type { Outcome } from "./acquire";
import { newToken } from "./ids";
import type { Lease } from "./lease";

/** How one acquisition ended, and the lease it made if it acquired. */
export interface Acquired {
  readonly outcome: Outcome;
  readonly lease?: Lease | undefined;
}

/** Requests about one token that the other kind must wait for: an acquisition's, or a release's. */
type Kind = "acquiring" | "releasing";

/**
 * The leases of caller-chosen tokens (`uuid`) on one Lock or Semaphore, and their requests in flight. One
 * token is one hold: a newer lease takes it over from an older one not released (`Lease.retire`). A release
 * and a same-token acquisition never overlap: whichever came second waits, lest the release end the hold
 * the acquisition confirmed. Held weakly: a lease nobody can release any more is forgotten.
 */
export class TokenLeases {
  readonly #leases = new Map<string, WeakRef<Lease>>();
  readonly #inFlight = { acquiring: new Map<string, Promise<unknown>>(), releasing: new Map() };
  #pruneAt = 64; // forgotten leases are swept once the map grows past this

  /** Settles once no request of this kind about `token` is in flight here; undefined when none is. */
  settled(kind: Kind, token: string): Promise<unknown> | undefined {
    return this.#inFlight[kind].get(token);
  }

  /** Counts `request` about `token` as in flight until it settles; returns it. */
  track<T>(kind: Kind, token: string, request: Promise<T>): Promise<T> {
    const running = this.#inFlight[kind];
    const all = Promise.allSettled([running.get(token), request]);
    running.set(token, all);
    void all.then(() => running.get(token) === all && running.delete(token));
    return request;
  }

  /**
   * Runs an acquisition with `uuid`, or with a new random token. A chosen token first waits for its release
   * in flight; `attempt` gets the token's lease here that holds (the same holder: a re-send, a hand-back);
   * the lease it makes takes the hold over, or its refusal reports that one lost (a try finding its own
   * token holding confirms it, so a refusal means the token lost it).
   */
  async acquire(
    uuid: string | undefined,
    attempt: (token: string, holding: Lease | undefined) => Promise<Acquired>,
  ): Promise<Acquired> {
    if (uuid === undefined) return attempt(newToken(), undefined);
    // Checked again after each wait, and not awaited when idle: see `Lease.release`.
    while (this.settled("releasing", uuid)) await this.settled("releasing", uuid);
    const newest = this.#leases.get(uuid)?.deref();
    const holding = newest?.active ? newest : undefined;
    const done = attempt(uuid, holding).then((result) => {
      const { outcome, lease } = result;
      if (lease) this.add(uuid, lease);
      else if (holding && !outcome.acquired && outcome.reason !== "redis-error") holding.lose("taken");
      return result;
    });
    return this.track("acquiring", uuid, done);
  }

  /** Makes `lease` the newest of `token`: the older one, unless released, hands it the hold. */
  add(token: string, lease: Lease): void {
    this.#leases.get(token)?.deref()?.retire(lease);
    this.#leases.set(token, new WeakRef(lease));
    if (this.#leases.size <= this.#pruneAt) return;
    for (const [known, ref] of this.#leases) if (!ref.deref()?.releasable) this.#leases.delete(known);
    this.#pruneAt = Math.max(64, this.#leases.size * 2);
  }
}
