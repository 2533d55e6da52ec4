import { afterAll, beforeAll } from "vitest";

/**
 * Records every unhandled rejection while the file's tests run, so a test can assert there was none
 * in its own window. Vitest fails the run on them as well; this says which test caused one.
 */
export function trackUnhandledRejections(): () => readonly unknown[] {
  const seen: unknown[] = [];
  const record = (reason: unknown) => {
    seen.push(reason);
  };
  beforeAll(() => {
    process.on("unhandledRejection", record);
  });
  afterAll(() => {
    process.off("unhandledRejection", record);
  });
  return () => seen;
}
