import { afterAll, beforeAll } from "vitest";
import { type LocalStack, type LocalStackOptions, startLocalStack } from "../../../stack/local-stack";

/**
 * Starts a stack of its own for the current test file (or describe block): for tests that stop Redis, flush
 * scripts, count requests or depend on proxy-only behaviour, which must not disturb the shared suite server.
 *
 * @returns a getter for the running stack.
 */
export function usePrivateStack(options: LocalStackOptions = {}): () => LocalStack {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    stack = await startLocalStack(options);
  });
  afterAll(async () => {
    await stack?.stop();
  });
  return () => {
    if (stack === undefined) {
      throw new Error("The private stack is only available inside tests");
    }
    return stack;
  };
}
