// The bench's "raw client" baseline (bench/mirror.ts) replays the EVALSHA calls our Lock makes. When the
// library's calls change shape, the replay must still take and free the lock, or the latency section fails.

import { describe, expect, it, vi } from "vitest";
import { evalClientRecorder, mirrorOfOurCommands } from "../../bench/mirror";
import { Lock } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";

// The bench measures dist/; the same code from src/ here, so that no build is needed first.
vi.mock("../../dist/index.js", () => import("../../src/index"));

describe("the bench's raw mirror of our commands", () => {
  it("takes and frees the lock, cycle after cycle, as the library would", async () => {
    const redis = newRedis();
    const id = uniqueId("bench-mirror");
    const mirror = await mirrorOfOurCommands(redis, evalClientRecorder(redis as never), id, 10_000);
    for (let cycle = 0; cycle < 3; cycle++) {
      expect(await mirror.acquire()).toBe(true);
      // Held: the library's own lock cannot take it.
      expect(await new Lock({ id, redis, retry: { attempts: 1 } }).acquire()).toBe(false);
      await mirror.release();
    }
    // Freed: the library takes it again.
    const lock = new Lock({ id, redis });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
  });
});
