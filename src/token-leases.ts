import type { Outcome } from "./acquire";
import type { Lease } from "./lease";

/** One acquisition with a chosen token, as {@link TokenLeases.begin} starts it. */
export interface TokenSession {
  /** The token's lease here that holds, if any: the same holder, so the acquisition takes no turn. */
  readonly holding: Lease | undefined;
  readonly gate: TokenGate;
  /** Ends it (also when it threw): registers `lease`, or reports `holding` lost on Redis's refusal. */
  finish(outcome: Outcome | undefined, lease: Lease | undefined): void;
}

/** What keeps an acquisition's tries apart from releases of its token on the same instance. */
export interface TokenGate {
  /** Settles once no release of the token is in flight here; undefined when none is. */
  releasing(): Promise<unknown> | undefined;
  /** Marks a try as sent (call it in the tick that sends it); returns how to unmark a try that failed. */
  trying(): () => void;
}

/** Requests about one token that the other kind must wait for: a try's, or a release's (or a renewal's). */
type Kind = "trying" | "releasing";

/**
 * The leases of caller-chosen tokens (`uuid`) on one Lock or Semaphore, and their requests in flight. One
 * token is one hold: a newer lease takes it over from an older one not released (`Lease.retire`). A release
 * and a same-token try never overlap: a try waits for a release (or renewal) in flight, and a release for a
 * try in flight (until the lease it made is registered, so that the release finds its own lease retired),
 * lest the release end the hold the try confirmed, or the renewal confirm a hold the try's undo must free.
 * Between tries nothing waits. Held weakly: a lease nobody can release any more is forgotten. Random tokens
 * never recur, so are not kept.
 */
export class TokenLeases {
  readonly #leases = new Map<string, WeakRef<Lease>>();
  readonly #inFlight = { trying: new Map<string, Promise<unknown>>(), releasing: new Map() };
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
   * Begins an acquisition with the chosen token `uuid`: its lease here that holds (the same holder: a
   * re-send, a hand-back), and the gate for its tries. `finish` ends it: the lease it made takes the hold
   * over, or its refusal reports the holding one lost (a try finding its own token holding confirms it, so a
   * refusal means the token lost it); its tries stop counting as in flight in that same tick.
   */
  begin(uuid: string): TokenSession {
    const newest = this.newest(uuid);
    const holding = newest?.active ? newest : undefined;
    const marks = new Set<() => void>();
    let triedOn: Lease | undefined; // the token's lease holding here when the newest try was sent
    const gate: TokenGate = {
      releasing: () => this.settled("releasing", uuid),
      trying: () => {
        const newest = this.newest(uuid);
        triedOn = newest?.active ? newest : undefined;
        let unmark!: () => void;
        this.track("trying", uuid, new Promise<void>((resolve) => (unmark = resolve)));
        marks.add(unmark);
        return () => marks.delete(unmark) && unmark();
      },
    };
    const finish = (outcome: Outcome | undefined, lease: Lease | undefined) => {
      try {
        // Also a lease of the token that held when the refused try went (an acquire started alongside made
        // it meanwhile, then overtaken): not one that came to hold after, which the refusal says nothing of.
        const held = holding ?? (triedOn?.active ? triedOn : undefined);
        // What the take found says something only of the lease that held as this acquisition began (one
        // confirmed since, by a reply read earlier, may be newer than the take: review helper-163).
        const about = holding && this.newest(uuid) === holding;
        if (lease) this.add(uuid, lease, about && outcome?.acquired ? outcome.kept : true);
        // Lost only if Redis named another holder: not after a wait here (for the token's renewal in flight),
        // nor after a try this process stalled over (read too late, it was undone: it named nobody).
        else if (held && outcome && !outcome.acquired && outcome.reason !== "redis-error" && !outcome.local) {
          if (!outcome.stalled) held.lose("taken");
        }
      } finally {
        for (const unmark of marks) unmark();
      }
    };
    return { holding, gate, finish };
  }

  /** The newest lease of `token` here, if it is still known. */
  newest(token: string): Lease | undefined {
    return this.#leases.get(token)?.deref();
  }

  /**
   * Makes `lease` the newest of `token`: the older one, unless released, hands it the hold, or is lost if
   * `lease`'s take found it gone (`kept`, as `Take`'s).
   */
  add(token: string, lease: Lease, kept: boolean | undefined): void {
    this.#leases.get(token)?.deref()?.retire(lease, kept);
    this.#leases.set(token, new WeakRef(lease));
    if (this.#leases.size <= this.#pruneAt) return;
    for (const [known, ref] of this.#leases) if (!ref.deref()?.releasable) this.#leases.delete(known);
    this.#pruneAt = Math.max(64, this.#leases.size * 2);
  }
}
