import { randomUUID } from "node:crypto";

/** A key prefix no other test (or earlier run) uses, so tests share one Redis without flushing it. */
export function keyPrefix(label: string): string {
  return `stack-test:${label}:${randomUUID()}:`;
}
