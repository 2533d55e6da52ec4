import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";

// The issue "Simple enough to trust" asks that a plain acquire reach the client within 8 calls of the
// library's own. The client's script call is replaced by one that records the stack and fails, so nothing is
// sent: the stack is the structure, not the network.
describe("call depth", () => {
  it("a plain Lock's acquire reaches @upstash/redis's evalsha/eval within 8 library calls", async () => {
    const redis = new Redis({ url: "http://127.0.0.1:9", token: "unused", enableAutoPipelining: false });
    let stack: string | undefined;
    const record = () => {
      stack ??= new Error().stack;
      return Promise.reject(new Error("not sent"));
    };
    Object.assign(redis, { eval: record, evalsha: record });
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 100;
    try {
      await new Lock({ id: "depth", redis }).acquire().catch(() => false);
    } finally {
      Error.stackTraceLimit = limit;
    }
    const frames = (stack ?? "").split("\n").slice(2); // the message, then `record` itself
    const top = frames.findIndex((frame) => /\bLock\.acquire\b/.test(frame));
    expect(top, `Lock.acquire is on the stack:\n${stack}`).toBeGreaterThanOrEqual(0);
    const library = frames.slice(0, top + 1).filter((frame) => /[/\\]src[/\\]/.test(frame));
    expect(library.length, library.join("\n")).toBeLessThanOrEqual(8);
    expect(library.length).toBe(top + 1); // nothing but the library's own frames between the two
  });
});
