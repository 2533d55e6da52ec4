// In a worker: the ownership oracle. It asks Redis directly, on a raw connection per member that
// bypasses the lock and the faults, where a token is. What an answer means depends on when it came,
// which the worker judges (scripts/chaos/worker.ts): only an answer sent and received while the
// library said held can contradict it.

import type { Redis as IoRedis } from "ioredis";
import { companionKey } from "../../src/keys";
import type { ChaosWorkerConfig } from "./protocol";
import { within } from "./within";

export interface Verdict {
  /**
   * Redis contradicts a holder of the token: on one Redis, no key that the hold is made of holds the
   * token (the lock key; for a semaphore, any permit key); on a quorum, so many members answered so
   * that no majority of them can hold it.
   */
  readonly contradicts: boolean;
  /** What each member answered (`ours`, `other`, `free` per key), for the violation's report. */
  readonly detail: string;
}

export interface Oracle {
  /**
   * Asks every member at once; resolves as soon as the answers decide (on a quorum, a majority
   * either way), or undefined when every member answered and they do not (errors).
   */
  ask(token: string): Promise<Verdict | undefined>;
  /** What still names `token` (keys, places in line), on the members that answer within `waitMs`. */
  leftovers(token: string, waitMs: number): Promise<string[]>;
}

export function oracleFor(config: ChaosWorkerConfig, probes: readonly IoRedis[]): Oracle {
  const { scenario, lockId } = config;
  // A FairLock's only permit is its key itself; 0.2.1 knows only the key.
  const permits =
    config.library === "current" && scenario.kind.endsWith("semaphore")
      ? Array.from({ length: scenario.limit }, (_, index) => companionKey(lockId, `:permit:${index + 1}`))
      : [lockId];
  const queue = scenario.fair && config.library === "current" ? companionKey(lockId, ":queue") : undefined;
  const majority = Math.floor(probes.length / 2) + 1;
  const label = (values: readonly (string | null)[], token: string) =>
    values.map((value) => (value === token ? "ours" : value === null ? "free" : "other")).join("/");

  return {
    ask(token) {
      return new Promise((resolve) => {
        const seen = probes.map(() => "?");
        let ours = 0;
        let not = 0;
        let answered = 0;
        const detail = () => seen.map((what, index) => `#${index} ${what}`).join(", ");
        probes.forEach((probe, index) => {
          probe
            .mget(...permits)
            .then(
              (values) => {
                seen[index] = label(values, token);
                if (values.includes(token)) ours += 1;
                else not += 1;
              },
              () => {
                seen[index] = "error";
              },
            )
            .finally(() => {
              answered += 1;
              if (ours >= majority) resolve({ contradicts: false, detail: detail() });
              else if (not >= majority) resolve({ contradicts: true, detail: detail() });
              else if (answered === probes.length) resolve(undefined);
            });
        });
      });
    },

    async leftovers(token, waitMs) {
      const found = await Promise.all(
        probes.map(async (probe, index) => {
          // A member that does not answer in time (frozen) is skipped.
          const values = await within(probe.mget(...permits), waitMs, []);
          const line: string[] = queue ? await within(probe.zrange(queue, "0", "-1"), waitMs, []) : [];
          return [
            ...permits.filter((_, at) => values[at] === token).map((key) => `#${index} ${key}`),
            ...line
              .filter((member) => member.endsWith(`:${token}`))
              .map(() => `#${index} a place in ${queue}`),
          ];
        }),
      );
      return found.flat();
    },
  };
}
