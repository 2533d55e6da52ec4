import { afterEach } from "vitest";
import type { Lock } from "../../../src/index";

const locks = new Set<Lock>();

// A test that failed half-way must not leave a lock renewing itself into the next test's counts.
afterEach(async () => {
  const pending = [...locks];
  locks.clear();
  await Promise.all(pending.map((lock) => lock.release().catch(() => false)));
});

/** Registers `lock` to be released after the current test, whatever its outcome. */
export function releasedAfterTest<T extends Lock>(lock: T): T {
  locks.add(lock);
  return lock;
}
