import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resolveAcquirePlan, resolveLockSettings } from "../../../src/options";
import { takeSeat } from "../../../src/permits/queue";

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

function seated(token = "token") {
  const seat = takeSeat(token, plan);
  // Named from the start: a grant can come before the reply of the try that queued the waiter.
  expect(seat.meaning(`granted:${idOf(seat.member)}:0:1:1`)).toBe("grant");
  return seat;
}

describe("a fair waiter's seat", () => {
  it("names the waiter uniquely per acquisition, with its grant and its token", () => {
    const [a, b] = [takeSeat("token", plan), takeSeat("token", plan)];
    expect(a.member).not.toBe(b.member);
    // Its longest wait between tries (500 ms) plus the grace: how long it stands in for itself.
    expect(a.member).toMatch(/^\d+-[0-9a-z]{6}:2500:token$/);
    expect(a.ticket(false)).toEqual({ member: a.member, now: Date.now(), entryMs: 2_500, lastTry: false });
  });

  it("is woken by a grant to itself at once, by an unnamed release at once when first in line, else soon", async () => {
    const seat = seated();
    const ticket = seat.ticket(false);
    seat.note({ kind: "held", pttl: 100, ahead: 2, place: 7 }, ticket);
    expect(seat.queued).toBe(true);
    // Those ahead may have left the line, which announces nothing: a try within the retry window tells.
    expect(seat.meaning("released")).toBe("soon");
    expect(seat.meaning(`granted:${"1-other0"}:7:2500:1` as const)).toBe("ignore");
    seat.note({ kind: "held", pttl: 100, ahead: 0, place: 7 }, ticket);
    expect(seat.meaning("released")).toBe("now");
    expect(seat.meaning("acquired")).toBe("ignore");
  });

  it("trusts a grant only for the place its last try found, and only with half of it left", async () => {
    const seat = seated();
    seat.note({ kind: "held", pttl: 100, ahead: 0, place: 7 }, seat.ticket(false));
    const refusedAt = performance.now();
    const grant = (place: number, ms: number) => `granted:${idOf(seat.member)}:${place}:${ms}:3` as const;
    expect(seat.granted(grant(6, 2_500), refusedAt)).toBeUndefined();
    vi.advanceTimersByTime(1_300);
    expect(seat.granted(grant(7, 2_500), refusedAt)).toBeUndefined();
    expect(seat.granted(grant(7, 5_000), refusedAt)).toEqual({ sentAt: refusedAt, pttl: 5_000, permit: 3 });
    expect(seat.queued).toBe(false);
  });

  it("its last try leaves the line; a failed try may have queued it", () => {
    const seat = takeSeat("token", plan);
    seat.note({ kind: "held", pttl: 100, ahead: 0, place: 1 }, seat.ticket(true));
    expect(seat.queued).toBe(false);
    seat.note(undefined, seat.ticket(false));
    expect(seat.queued).toBe(true);
  });
});
