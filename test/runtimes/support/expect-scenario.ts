import { expect } from "vitest";
import type { ScenarioResult } from "../fixtures/scenario";
import type { AwaitUsingSyntax } from "./built-package";

/**
 * Checks what `fixtures/scenario.ts` saw in one runtime against what the lock promises everywhere.
 *
 * @param runtime matches the runtime the scenario says it ran in, so a test cannot pass by running elsewhere.
 */
export function expectScenarioPassed(
  printed: ScenarioResult & { resolved?: string },
  runtime: RegExp,
  awaitUsing: AwaitUsingSyntax,
): void {
  const { resolved: _whereFrom, ...result } = printed;
  expect(result).toEqual({
    runtime: expect.stringMatching(runtime),
    awaitUsing,
    acquire: { acquired: true, rivalAcquired: false, status: "ACQUIRED", rivalStatus: "FREE" },
    extend: { extended: true, remainingMs: expect.any(Number) },
    release: { released: true, statusAfter: "FREE", releasedAgain: false },
    acquireOrThrow: {
      threw: true,
      isLockAcquisitionError: true,
      isLockError: true,
      name: "LockAcquisitionError",
      code: "LOCK_NOT_ACQUIRED",
      reason: "held",
      attempts: 2,
    },
    awaitUsingBlock: { statusInside: "ACQUIRED", freeAfter: true, errorKept: true, freeAfterThrow: true },
    fencing: { first: expect.any(Number), second: expect.any(Number) },
    autoExtend: {
      lease: expect.any(Number),
      waitedMs: expect.any(Number),
      status: "ACQUIRED",
      rivalAcquired: false,
      lost: false,
    },
  });
  // A 5 s lease extended by 10 s: more than the lease alone could leave.
  expect(result.extend.remainingMs).toBeGreaterThan(12_000);
  const { first, second } = result.fencing as { first: number; second: number };
  expect(Number.isSafeInteger(first)).toBe(true);
  expect(second).toBeGreaterThan(first);
  // Held for three leases: only renewals can explain it.
  expect(result.autoExtend.waitedMs).toBeGreaterThanOrEqual(result.autoExtend.lease * 3);
}
