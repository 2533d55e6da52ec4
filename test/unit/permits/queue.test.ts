import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resolveAcquirePlan, resolveLockSettings } from "../../../src/options";
import { FairWaiter } from "../../../src/permits/queue";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const settings = resolveLockSettings({ id: "id", redis: { eval: async () => 0 }, lease: 10_000 });
const plan = resolveAcquirePlan({ retry: { delay: 50, maxDelay: 500 } }, settings);

/** The id a grant names a waiter by: its entry's first part. */
const idOf = (member: string) => member.slice(0, member.indexOf(":"));

function waiter(token = "token") {
  const left: string[] = [];
  const fair = new FairWaiter(
    token,
    plan,
    undefined,
    async (member) => {
      left.push(member);
    },
    () => {},
  );
  return { fair, left };
}

function seated(token = "token") {
  const { fair } = waiter(token);
  // Named from the start: a grant can come before the reply of the try that queued the waiter.
  expect(fair.meaning(`granted:${idOf(fair.member)}:0:1:1`)).toBe("grant");
  return fair;
}

describe("a fair waiter's seat", () => {
  it("names the waiter uniquely per acquisition, with its grant and its token", () => {
    const [a, b] = [waiter().fair, waiter().fair];
    expect(a.member).not.toBe(b.member);
    // Its longest wait between tries (500 ms) plus the grace: how long it stands in for itself.
    expect(a.member).toMatch(/^[0-9a-z]{10}-[0-9a-z]{6}:2500:token$/);
    expect(a.trying(false)).toEqual({ member: a.member, now: Date.now(), entryMs: 2_500, lastTry: false });
  });

  it("is woken by a grant to itself at once, by an unnamed release at once when first in line, else soon", async () => {
    const fair = seated();
    fair.trying(false);
    fair.answered({ kind: "held", pttl: 100, ahead: 2, place: 7 });
    expect(fair.queued).toBe(true);
    // Those ahead may have left the line, which announces nothing: a try within the retry window tells.
    expect(fair.meaning("released")).toBe("soon");
    expect(fair.meaning(`granted:${"1-other0"}:7:2500:1` as const)).toBe("ignore");
    fair.trying(false);
    fair.answered({ kind: "held", pttl: 100, ahead: 0, place: 7 });
    expect(fair.meaning("released")).toBe("now");
    expect(fair.meaning("acquired")).toBe("ignore");
  });

  it("trusts a grant only for the place its last try found, and only with half of it left", async () => {
    const fair = seated();
    const grant = (place: number, ms: number) => `granted:${idOf(fair.member)}:${place}:${ms}:3` as const;
    expect(fair.granted(grant(0, 2_500))).toBeUndefined(); // no refused try yet: nothing to count from
    fair.trying(false);
    const refusedAt = performance.now();
    fair.answered({ kind: "held", pttl: 100, ahead: 0, place: 7 });
    expect(fair.granted(grant(6, 2_500))).toBeUndefined();
    vi.advanceTimersByTime(1_300);
    expect(fair.granted(grant(7, 2_500))).toBeUndefined();
    // Its id names the hold on the permit's list: its release ends that hold only.
    const hold = idOf(fair.member);
    expect(fair.granted(grant(7, 5_000))).toEqual({ sentAt: refusedAt, pttl: 5_000, permit: 3, hold });
    expect(fair.queued).toBe(false);
  });

  it("its last try leaves the line; a failed try may have queued it", () => {
    const { fair } = waiter();
    fair.trying(true);
    fair.answered({ kind: "held", pttl: 100, ahead: 0, place: 1 });
    expect(fair.queued).toBe(false);
    fair.trying(false);
    fair.answered(undefined);
    expect(fair.queued).toBe(true);
  });

  it("leaves the line when done while queued, and again once a try left behind has settled", async () => {
    const { fair, left } = waiter();
    fair.trying(false);
    fair.answered(undefined);
    let settle!: () => void;
    fair.close(new Promise<void>((resolve) => (settle = resolve)));
    expect(left).toEqual([fair.member]);
    settle();
    await Promise.resolve();
    await Promise.resolve();
    // helper-93: a single leave, overtaken by that try (or failed), left the waiter in line for a release
    expect(left).toEqual([fair.member, fair.member]);
  });

  it("leaves the line once a try left behind has settled, when not known queued", async () => {
    const { fair, left } = waiter();
    let settle!: () => void;
    fair.close(new Promise<void>((resolve) => (settle = resolve)));
    expect(left).toEqual([]);
    settle();
    await Promise.resolve();
    await Promise.resolve();
    expect(left).toEqual([fair.member]);
  });
});
