import { afterEach, vi } from "vitest";

// A library that logs is a library that hides failures: any console.error or console.warn
// during a test fails that test, unless the test replaced the spy on purpose.
const watched = ["error", "warn"] as const;

const spies = watched.map((method) => vi.spyOn(console, method));

afterEach(() => {
  for (const spy of spies) {
    const calls = spy.mock.calls;
    if (calls.length > 0) {
      const printed = calls.map((args) => args.map(String).join(" ")).join("\n");
      spy.mockClear();
      throw new Error(`Unexpected console output during the test:\n${printed}`);
    }
  }
});
