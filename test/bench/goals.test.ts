// The bench's goal table (bench/goals.ts) must say what it measured in words, even when a section had
// nothing to measure: at K = 8 the releasing worker may take every section back, so no handover to a
// waiting worker happens in any round.

import { describe, expect, it, vi } from "vitest";
import type { ContentionResults, ContentionSummary } from "../../bench/contention";
import { evaluateGoals } from "../../bench/goals";
import type { LatencyResults } from "../../bench/latency";

vi.mock("../../dist/index.js", () => import("../../src/index"));

function tcpRun(waiterHandoverP50: number): ContentionResults {
  const row = {
    transport: "tcp",
    variant: "ours-wake",
    k: 8,
    rounds: 3,
    handoverP50: 1.19,
    waiterHandoverP50,
  } as unknown as ContentionSummary;
  return { summary: [row] } as unknown as ContentionResults;
}

function handoverGoal(waiterHandoverP50: number) {
  const latency = { rttP50: 0.04, variants: [] } as unknown as LatencyResults;
  const goals = evaluateGoals({ latency: { tcp: latency }, contention: { tcp: tcpRun(waiterHandoverP50) } });
  const goal = goals.find(
    (entry) => entry.goal.startsWith("Handover p50 at K = 8, ours, wake-ups") && entry.goal.endsWith("(TCP)"),
  );
  expect(goal).toBeDefined();
  return goal as NonNullable<typeof goal>;
}

describe("the bench's K = 8 handover goal", () => {
  it("says so in words when no section went to a waiting worker, not NaN", () => {
    const goal = handoverGoal(Number.NaN);
    expect(`${goal.measured} ${goal.verdict}`).not.toContain("NaN");
    expect(goal.measured).toContain("no section went to a waiting worker");
    expect(goal.pass).toBe(false);
  });

  it("measures a handover when there was one", () => {
    const goal = handoverGoal(1.5);
    expect(goal.measured).toContain("1.50 ms to a waiting worker");
    expect(goal.verdict).toBe("PASS, 0.58 ms to spare");
  });
});
