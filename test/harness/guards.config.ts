// Runs the harness fixtures (test/harness/fixtures/*.fixture.ts) with the suite's guards and
// otherwise default settings. Only test/harness/guards.test.ts uses it; the fixtures fail on purpose.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["test/harness/fixtures/*.fixture.ts"],
    setupFiles: ["test/support/strict-console.ts"],
  },
});
