// A release's or extend's receipt must outlive the latest copy of it that can still land, which the library
// takes to be a lease after the send (`landed()`). Review helper-56 (2026-12-04): receipts lived 30 s
// whatever the lease, so with a 60 s lease a release's first copy landing 31 s late (its client had re-sent
// it) found no receipt, and deleted the newer hold its uuid had taken meanwhile: two holders.
import { describe, expect, it } from "vitest";
import { FairLock, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";

const wire = useWire(sharedEndpoint);
const LEASE_MS = 60_000;

describe.each([
  ["Lock", (id: string) => new Lock({ id, redis: wire().faulty, lease: LEASE_MS }), ":receipt"],
  ["FairLock", (id: string) => new FairLock({ id, redis: wire().faulty, lease: LEASE_MS }), ":receipts"],
  [
    "Semaphore",
    (id: string) => new Semaphore({ id, redis: wire().faulty, limit: 2, lease: LEASE_MS }),
    ":receipts",
  ],
] as const)("%s with a lease longer than 30 s", (_name, make, suffix) => {
  it.each(["release", "extend"] as const)("keeps the receipt of a %s for the lease", async (call) => {
    const id = uniqueId("receipt-lifetime");
    const lock = make(id);
    const lease = await lock.acquireOrThrow();
    expect(await (call === "extend" ? lease.extend(1_000) : lease.release())).toBe(true);
    expect(await wire().direct.pttl(companionKey(id, suffix))).toBeGreaterThan(LEASE_MS - 5_000);
    await lease.release();
  });
});
