// Review helper-83 (2026-12-05), on this stop's first version of the failed-release error (a release that
// threw keeps a shared Lock's turn; its waiters fail with its error): the record outlived the turn it
// described, so waiters of a healthy holder were told redis-error (3/3 each). It is now the turn's own.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("a failed release's error, recorded after the turn was handed on", () => {
  it.each(["await using", "runExclusive"])(
    "%s, then a release() retry while Redis is still down: later waiters of a healthy holder are told it holds",
    async (how) => {
      const id = uniqueId("stale-release-error");
      const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
      if (how === "await using") {
        await using held = await lock.acquireOrThrow();
        expect(held.remainingMs).toBeGreaterThan(0);
        wire().passThrough.faults.refuse(); // Redis unreachable from here on
      } else {
        await lock.runExclusive(async () => {
          wire().passThrough.faults.refuse();
        });
      }
      // The disposal's release failed; the turn was handed on at once. A cleanup (or a second disposal)
      // retries release() while Redis is still unreachable: it throws, as documented.
      const retry = await lock.release().then(
        () => "resolved",
        (e: unknown) => (e as Error).name,
      );
      expect(retry).not.toBe("resolved");
      // Redis comes back; the key of the old lease is gone (expired / deleted by an operator).
      wire().passThrough.faults.reset();
      await wire().direct.del(id);
      // B takes the lock and holds it, healthy.
      expect(await lock.acquire()).toBe(true);
      // C waits for B's turn and gives up: it should be told "held" (false), Redis being fine.
      const c = await lock.acquire({ timeout: 300, retry: { delay: 50 } }).then(
        (ok) => `resolved ${ok}`,
        (e: unknown) => `threw ${(e as Error).name}: ${(e as Error).message}`,
      );
      const d = await lock.acquireOrThrow({ timeout: 300, retry: { delay: 50 } }).then(
        () => "acquired",
        (e: unknown) => (e instanceof LockAcquisitionError ? e.reason : String(e)),
      );
      expect(await lock.release()).toBe(true);
      expect({ c, d }).toEqual({ c: "resolved false", d: "timeout" });
    },
  );

  it("the error ends with its turn: after a lease that ends unreleased (lost), later waiters are told it holds", async () => {
    const id = uniqueId("stale-release-forever");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    {
      await using held = await lock.acquireOrThrow();
      expect(held.id).toBe(id);
      wire().passThrough.faults.refuse();
    }
    await lock.release().catch(() => undefined);
    wire().passThrough.faults.reset();
    await wire().direct.del(id);
    // B holds with auto-extend; an operator deletes its key: B's lease is lost (no release, no hand-over).
    expect(await lock.acquire({ autoExtend: { interval: 100 } })).toBe(true);
    const bSignal = lock.signal;
    await wire().direct.del(id);
    await waitUntil(() => bSignal.aborted, "B's lease reported lost"); // renewals 100 ms apart; bounded at 5 s
    // E acquires and holds; F waits for E's turn.
    expect(await lock.acquire()).toBe(true);
    const f = await lock.acquireOrThrow({ timeout: 300, retry: { delay: 50 } }).then(
      () => "acquired",
      (e: unknown) => (e instanceof LockAcquisitionError ? e.reason : String(e)),
    );
    expect(await lock.release()).toBe(true);
    expect(f).toBe("timeout"); // timed out waiting for a healthy holder, not redis-error
  });
});

it("a seeded uuid's failed release (it has no turn): a waiter for a healthy holder's turn is told it holds", async () => {
  const id = uniqueId("seeded-release-error");
  const lock = new Lock({ id, redis: wire().faulty, lease: 5_000, uuid: crypto.randomUUID() });
  wire().passThrough.faults.refuse();
  const first = await lock.release().then(
    () => "resolved",
    (e: Error) => e.name,
  );
  expect(first).toBe("LockRedisError");
  wire().passThrough.faults.reset();
  expect(await lock.acquire()).toBe(true); // a random token: another caller here
  const waiter = await lock.acquire({ timeout: 300, retry: { delay: 50 } }).then(
    (ok) => `resolved ${ok}`,
    (e: Error) => `threw ${e.name}: ${e.message}`,
  );
  expect(await lock.release()).toBe(true);
  expect(waiter).toBe("resolved false");
});
