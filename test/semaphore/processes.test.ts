import { describe, expect, inject, it } from "vitest";
import { Semaphore } from "../../src/index";
import { pause } from "../faults/support/time";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();
const connection = { UPSTASH_URL: inject("upstashUrl"), UPSTASH_TOKEN: inject("upstashToken") };

/** The most sections that were running at one moment, from their [start, end] times. */
function mostAtOnce(sections: readonly (readonly [number, number])[]): number {
  const events = sections.flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ]);
  // At the same millisecond, an end comes before a start: touching sections do not overlap.
  events.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let running = 0;
  let most = 0;
  for (const [, change] of events) {
    running += change as number;
    most = Math.max(most, running);
  }
  return most;
}

describe("a semaphore across real processes", () => {
  it.each([
    { limit: 1, processes: 4, fair: false },
    { limit: 3, processes: 6, fair: true },
    { limit: 10, processes: 12, fair: false },
  ])(
    "limit $limit, $processes processes (fair: $fair): never more than the limit at once, counted in Redis and in time",
    async ({ limit, processes, fair }) => {
      const id = uniqueId(`permits-${limit}`);
      const occupancyKey = `${id}:occupancy`;
      const sectionsEach = 12;
      const workers = Array.from({ length: processes }, () =>
        runTypeScript(
          new URL("./fixtures/permit-worker.ts", import.meta.url),
          {
            ...connection,
            SEMAPHORE_ID: id,
            OCCUPANCY_KEY: occupancyKey,
            LIMIT: String(limit),
            SECTIONS: String(sectionsEach),
            FAIR: fair ? "1" : "0",
          },
          150_000,
        ),
      );
      const reports = (await Promise.all(workers)).map(({ stdout }) =>
        lastJsonLine<{ highest: number; sections: [number, number][] }>(stdout),
      );
      const sections = reports.flatMap((report) => report.sections);
      expect(sections).toHaveLength(processes * sectionsEach);
      const inRedis = Math.max(...reports.map((report) => report.highest));
      expect(inRedis).toBeLessThanOrEqual(limit);
      expect(mostAtOnce(sections)).toBeLessThanOrEqual(limit);
      // The permits were really shared: at some moment more than one section ran (limit > 1).
      if (limit > 1) expect(inRedis).toBeGreaterThan(1);
      expect(Number(await redis.get(occupancyKey))).toBe(0);
      await redis.del(occupancyKey);
    },
    180_000,
  );
});

describe("a process that only waits for a permit", () => {
  // Found here: the wait between two tries ran on an unref'd timer, so a process with nothing else
  // to do exited mid-wait (Node: code 13, an unsettled top-level await).
  it("stays alive through its wait and gets the permit once it is released", async () => {
    const id = uniqueId("permit-wait-alone");
    const holder = await new Semaphore({ id, redis, limit: 1 }).acquireOrThrow();
    const waiter = runTypeScript(new URL("./fixtures/wait-worker.ts", import.meta.url), {
      ...connection,
      SEMAPHORE_ID: id,
    });
    const released = pause(1_000).then(() => holder.release());
    try {
      const { stdout } = await waiter;
      expect(stdout.trim()).toBe("acquired");
    } finally {
      await released;
    }
  }, 30_000);
});
