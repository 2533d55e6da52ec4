// A release in the gap between a wait's try and its subscription becoming active is not announced to it (it
// was not listening yet), and that try is not covered. The wait used to find the lock free only at its next
// planned poll, `retry.delay` later (review helper-180: a FairLock waiter served 5 s late with
// `delay: 5000`). The covering poll now goes once the subscription is active. Here the wait's SUBSCRIBE is
// held back until the holder's release was answered, so the release surely falls in that gap; the next
// planned poll is 8 s away, and the wait must hold the lock before a timer due a second earlier.
import { afterEach, describe, expect, it, vi } from "vitest";
import { enableWakeUps, FairLock, Lock, type RedisClient } from "../../src/index";
import { type ClientName, useBothClients } from "../faults/support/both-clients";
import { pause, within } from "../faults/support/time";
import { uniqueId } from "../support/redis";

const { ioredis, clients } = useBothClients();

/** The wait's planned poll after its first try: far beyond a covering poll's few round trips. */
const DELAY_MS = 8_000;

/** Where subscriptions wait before their SUBSCRIBE goes out: `asked` once one waits; `open()` frees them. */
interface Gate {
  readonly asked: Promise<void>;
  open(): void;
}

function gate(): { gate: Gate; pass: () => Promise<void> } {
  let asked = () => {};
  let open = () => {};
  const askedPromise = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    gate: { asked: askedPromise, open },
    pass: () => {
      asked();
      return opened;
    },
  };
}

/** A waiting client with wake-ups whose subscriptions wait at the returned gate before subscribing. */
function heldBack(name: ClientName): { client: RedisClient; gate: Gate } {
  const { gate: held, pass } = gate();
  if (name === "ioredis") {
    const client = ioredis();
    const duplicate = client.duplicate.bind(client);
    client.duplicate = ((...args: Parameters<typeof client.duplicate>) => {
      const copy = duplicate(...args);
      const subscribe = copy.subscribe.bind(copy) as (...rest: unknown[]) => Promise<unknown>;
      copy.subscribe = (async (...rest: unknown[]) => {
        await pass();
        return subscribe(...rest);
      }) as typeof copy.subscribe;
      return copy;
    }) as typeof client.duplicate;
    enableWakeUps(client);
    return { client, gate: held };
  }
  const client = clients.upstash();
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.includes("/subscribe/")) await pass();
    return realFetch(input, init);
  });
  enableWakeUps(client);
  return { client, gate: held };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(["ioredis", "upstash"] as const)("%s, with wake-ups", (name) => {
  it.each([
    ["Lock", Lock],
    ["FairLock", FairLock],
  ] as const)(
    "%s: a release before the subscription is active is found once it is",
    async (_kind, Kind) => {
      const id = uniqueId(`subscription-gap-${name}`);
      const holder = new Kind({ id, redis: clients[name](), lease: 60_000 });
      expect(await holder.acquire()).toBe(true);
      const { client, gate: held } = heldBack(name);
      const waiter = new Kind({
        id,
        redis: client,
        lease: 60_000,
        retry: { attempts: Infinity, delay: DELAY_MS },
      });
      // No timeout: an unbounded wait subscribes at its first refusal (a bounded one only if that pays).
      const acquiring = waiter.acquire();
      // Its first try was refused: it asks for a subscription, held back here until the release was answered.
      await within(held.asked, 5_000, "the wait's subscription");
      // A plain timer due a second before the planned poll (both later on a loaded machine, alike).
      const beforePoll = pause(DELAY_MS - 1_000).then(() => "the planned poll came first");
      await holder.release();
      held.open();
      const handed = acquiring.then((acquired) => (acquired ? "handed over" : "not acquired"));
      expect(await Promise.race([handed, beforePoll])).toBe("handed over");
      await waiter.release();
    },
    30_000,
  );
});
