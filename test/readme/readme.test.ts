import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { newRedis } from "../support/redis";
import { allTypeScriptBlocks, exampleRegion, readmeBlocks } from "./readme-blocks";

// The README's examples are regions of files in examples/, which this file runs against the
// suite's server through Redis.fromEnv(), exactly as a reader would.
const redis = newRedis();
const savedEnv = { url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN };

beforeAll(() => {
  process.env.UPSTASH_REDIS_REST_URL = inject("upstashUrl");
  process.env.UPSTASH_REDIS_REST_TOKEN = inject("upstashToken");
});

afterAll(() => {
  for (const [name, value] of [
    ["UPSTASH_REDIS_REST_URL", savedEnv.url],
    ["UPSTASH_REDIS_REST_TOKEN", savedEnv.token],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("README code blocks", () => {
  it("every TypeScript block is a tagged region of an example file", () => {
    const tagged = readmeBlocks();
    expect(tagged.length).toBeGreaterThanOrEqual(5);
    // Untagged blocks would be code no test runs; the API reference uses `text` blocks instead.
    expect(allTypeScriptBlocks()).toHaveLength(tagged.length);
  });

  it.each(readmeBlocks().map((block) => [`${block.file}#${block.region}`, block] as const))(
    "%s matches its example file",
    (_label, block) => {
      expect(block.code).toBe(exampleRegion(block.file, block.region));
    },
  );
});

describe("README examples run", () => {
  it("quick start: acquires, runs the critical section under the lock, releases", async () => {
    const example = await import("../../examples/quick-start");
    const seen: number[] = [];
    example.work.criticalSection = async () => {
      seen.push(await redis.exists("unique-lock-id"));
    };
    expect(await example.handleOperation()).toBe(true);
    expect(seen).toEqual([1]);
    expect(await redis.exists("unique-lock-id")).toBe(0);
  });

  it("await using: releases after success and after a throw, and reports a busy lock", async () => {
    const example = await import("../../examples/await-using");
    const seen: number[] = [];
    example.work.criticalSection = async (id) => {
      seen.push(await redis.exists(id));
    };
    expect(await example.handleOperation()).toBe("done");
    expect(await example.handleOperationWithBoolean()).toBe(true);
    expect(seen).toEqual([1, 1]);
    expect(await redis.exists("unique-lock-id")).toBe(0);

    const failure = new Error("work failed");
    example.work.criticalSection = async () => {
      throw failure;
    };
    await expect(example.handleOperation()).rejects.toBe(failure);
    await expect(example.handleOperationWithBoolean()).rejects.toBe(failure);
    expect(await redis.exists("unique-lock-id")).toBe(0);

    await redis.set("unique-lock-id", "someone-else", { px: 5_000 });
    expect(await example.handleOperation()).toBe("busy");
    expect(await example.handleOperationWithBoolean()).toBe(false);
    await redis.del("unique-lock-id");
  });

  it("hand-off: a second Lock seeded with the uuid extends and releases", async () => {
    const example = await import("../../examples/handoff");
    const messages: { uuid: string }[] = [];
    example.queue.enqueue = async (message) => {
      messages.push(message);
    };
    const uuid = await example.startJob();
    expect(uuid).toBeDefined();
    expect(messages).toEqual([{ uuid }]);
    expect(await example.startJob()).toBeUndefined();
    expect(await example.finishJob(uuid as string)).toBe(true);
    expect(await redis.exists("job-lock")).toBe(0);
    expect(await example.finishJob(uuid as string)).toBe(false);
  });

  it("hand-off across processes: startJob here, finishJob in a second Node process", async () => {
    const { startJob } = await import("../../examples/handoff");
    const uuid = await startJob();
    expect(uuid).toEqual(expect.any(String));
    expect(await redis.exists("job-lock")).toBe(1);

    const worker = new URL("./handoff-finish.ts", import.meta.url);
    const environment = {
      UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
      UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
      LOCK_UUID: uuid as string,
    };
    expect(lastJsonLine((await runTypeScript(worker, environment)).stdout)).toEqual({ released: true });
    expect(await redis.exists("job-lock")).toBe(0);
    // A stale worker holding the same uuid finds the lock gone and says so.
    expect(lastJsonLine((await runTypeScript(worker, environment)).stdout)).toEqual({ released: false });
  });

  it("long work: renews through slow pages, and stops when the lock is lost", async () => {
    const example = await import("../../examples/long-work");
    const rendered: string[] = [];
    example.work.listPages = async () => ["a", "b", "c"];
    example.work.renderPage = async (page) => {
      rendered.push(page);
    };
    expect(await example.rebuildReport()).toBe("done");
    expect(rendered).toEqual(["a", "b", "c"]);
    expect(await redis.exists("report:rebuild")).toBe(0);

    rendered.length = 0;
    example.work.renderPage = async (page, signal) => {
      rendered.push(page);
      // Someone deletes the key mid-work; the next renewal finds out.
      await redis.del("report:rebuild");
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    };
    expect(await example.rebuildReport()).toBe("lost");
    expect(rendered).toEqual(["a"]);

    await redis.set("report:rebuild", "another-owner", { px: 10_000 });
    expect(await example.rebuildReport()).toBe("busy");
    await redis.del("report:rebuild");
  });

  it("fencing: the store refuses a write with an older token", async () => {
    const { FencedStore, writeUnderLock } = await import("../../examples/fencing");
    const { Lock } = await import("@upstash/lock");
    const store = new FencedStore();
    const lock = new Lock({ id: "fenced-report", redis });
    expect(await writeUnderLock(lock, store, "k", "first")).toBe(true);
    expect(await writeUnderLock(lock, store, "k", "second")).toBe(true);
    expect(store.write("k", "stale", 1)).toBe(false);
    expect(store.read("k")).toBe("second");
  });

  it("debounce: a burst of calls rebuilds once", async () => {
    const example = await import("../../examples/debounce");
    const reasons: string[] = [];
    example.work.rebuild = async (reason) => {
      reasons.push(reason);
    };
    const ran = await Promise.all(["a", "b", "c"].map((doc) => example.onDocumentEdited(doc)));
    expect(ran.filter(Boolean)).toHaveLength(1);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^edited [abc]$/);
  });

  it("semaphore: never more than 5 calls to the paid API at once, and every caller gets its answer", async () => {
    const example = await import("../../examples/semaphore");
    let running = 0;
    let most = 0;
    example.work.callPaidApi = async (text) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 150));
      running -= 1;
      return `summary of ${text}`;
    };
    const texts = Array.from({ length: 12 }, (_, index) => `text ${index}`);
    const answers = await Promise.all(texts.map((text) => example.summarize(text)));
    expect(answers).toEqual(texts.map((text) => `summary of ${text}`));
    expect(most).toBe(5);
  });

  it("fair lock: workers drain the queue one at a time, each in turn", async () => {
    const example = await import("../../examples/fair-lock");
    let running = 0;
    let overlapped = false;
    const order: string[] = [];
    example.work.processNextBatch = async (worker) => {
      running += 1;
      overlapped ||= running > 1;
      order.push(worker);
      await new Promise((resolve) => setTimeout(resolve, 50));
      running -= 1;
      return 1;
    };
    const workers = ["a", "b", "c", "d"];
    const batches = await Promise.all(workers.map((worker) => example.drainBatch(worker)));
    expect(batches).toEqual([1, 1, 1, 1]);
    expect(overlapped).toBe(false);
    expect([...order].sort()).toEqual(workers);
  });
});
