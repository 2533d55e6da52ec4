import { describe, expect, it, vi } from "vitest";
import type { Outcome } from "../../src/acquire";
import type { Lease } from "../../src/lease";
import { TokenLeases } from "../../src/token-leases";

/** The parts of a lease TokenLeases reads and calls; a stand-in for this unit's logic only. */
function fakeLease(state: { active?: boolean; releasable?: boolean } = {}) {
  return {
    active: state.active ?? true,
    releasable: state.releasable ?? true,
    lose: vi.fn(),
    retire: vi.fn(),
  } as unknown as Lease & { lose: ReturnType<typeof vi.fn>; retire: ReturnType<typeof vi.fn> };
}

const refused: Outcome = { acquired: false, attempts: 1, elapsedMs: 1, reason: "held" };

/** Whether `promise` settled within the pending microtasks. */
async function settledSoon(promise: Promise<unknown> | undefined): Promise<boolean> {
  let done = false;
  void promise?.then(() => (done = true));
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

describe("TokenLeases", () => {
  it("counts a request as in flight until it settles, a rejected one too", async () => {
    const leases = new TokenLeases();
    let fail!: (error: Error) => void;
    const request = new Promise((_, reject) => (fail = reject));
    leases.track("releasing", "t", request).catch(() => {});
    const waiting = leases.settled("releasing", "t");
    expect(waiting).toBeDefined();
    expect(leases.settled("trying", "t")).toBeUndefined(); // the other kind is apart
    expect(leases.settled("releasing", "other")).toBeUndefined();
    fail(new Error("down"));
    expect(await settledSoon(waiting)).toBe(true);
    expect(leases.settled("releasing", "t")).toBeUndefined();
  });

  it("waits for every request of a kind tracked, not only the last", async () => {
    const leases = new TokenLeases();
    let first!: () => void;
    leases.track("releasing", "t", new Promise<void>((resolve) => (first = resolve)));
    leases.track("releasing", "t", Promise.resolve());
    const waiting = leases.settled("releasing", "t");
    expect(await settledSoon(waiting)).toBe(false);
    first();
    expect(await settledSoon(waiting)).toBe(true);
  });

  it("marks a try in flight from its send until the session finishes", async () => {
    const leases = new TokenLeases();
    const session = leases.begin("t");
    expect(session.holding).toBeUndefined();
    session.gate.trying();
    const trying = leases.settled("trying", "t");
    expect(await settledSoon(trying)).toBe(false);
    session.finish(refused, undefined);
    expect(await settledSoon(trying)).toBe(true);
  });

  it("unmarks a failed try at once, and only that one", async () => {
    const leases = new TokenLeases();
    const session = leases.begin("t");
    const unmarkFirst = session.gate.trying();
    session.gate.trying();
    unmarkFirst();
    expect(await settledSoon(leases.settled("trying", "t"))).toBe(false); // the second is still in flight
    session.finish(undefined, undefined);
    expect(await settledSoon(leases.settled("trying", "t"))).toBe(true);
  });

  it("names the token's holding lease as the holder, and hands the hold to the newer lease", () => {
    const leases = new TokenLeases();
    const older = fakeLease();
    leases.add("t", older, true);
    const session = leases.begin("t");
    expect(session.holding).toBe(older);
    const newer = fakeLease();
    session.finish(undefined, newer);
    expect(older.retire).toHaveBeenCalledWith(newer, true);
    expect(leases.newest("t")).toBe(newer);
  });

  it("tells the older lease whether the newer one's take found the token holding", () => {
    const acquired = (kept: boolean | undefined): Outcome => ({
      acquired: true,
      attempts: 1,
      sentAt: 0,
      pttl: 1_000,
      fencingToken: undefined,
      permit: 1,
      hold: "try",
      kept,
    });
    for (const kept of [true, false, undefined]) {
      const leases = new TokenLeases();
      const older = fakeLease();
      leases.add("t", older, true);
      const newer = fakeLease();
      leases.begin("t").finish(acquired(kept), newer);
      expect(older.retire).toHaveBeenCalledWith(newer, kept);
    }
  });

  it("reports the holding lease lost when Redis named another holder, not on an error or a wait here", () => {
    const leases = new TokenLeases();
    const holding = fakeLease();
    leases.add("t", holding, true);
    leases.begin("t").finish({ ...refused, reason: "redis-error" }, undefined);
    leases.begin("t").finish({ ...refused, local: true }, undefined);
    expect(holding.lose).not.toHaveBeenCalled();
    leases.begin("t").finish(refused, undefined);
    expect(holding.lose).toHaveBeenCalledWith("taken");
  });

  it("does not count a lease that no longer holds as the holder", () => {
    const leases = new TokenLeases();
    leases.add("t", fakeLease({ active: false }), true);
    expect(leases.begin("t").holding).toBeUndefined();
  });

  it("forgets leases nobody can release once the map grows, keeping releasable ones", () => {
    const leases = new TokenLeases();
    const kept = fakeLease();
    leases.add("kept", kept, true);
    for (let i = 0; i < 70; i++) leases.add(`gone-${i}`, fakeLease({ releasable: false }), true);
    expect(leases.newest("kept")).toBe(kept);
    expect(leases.newest("gone-0")).toBeUndefined();
  });
});
