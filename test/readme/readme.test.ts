import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { companionKey } from "../../src/keys";
import { abortTime, pause, waitUntil, within } from "../faults/support/time";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { newRedis } from "../support/redis";
import { allTypeScriptBlocks, documentationPages, exampleBlocks, exampleRegion } from "./readme-blocks";

// The examples of README.md and docs/ are regions of files in examples/, which this file runs
// against the suite's server through Redis.fromEnv(), exactly as a reader would.
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

describe("README and docs/ code blocks", () => {
  it("the README shows examples", () => {
    expect(exampleBlocks("README.md").length).toBeGreaterThanOrEqual(5);
  });

  // Untagged blocks would be code no test runs; the API reference uses `text` blocks instead.
  it.each(documentationPages())(
    "every TypeScript block of %s is a tagged region of an example file",
    (page) => {
      expect(allTypeScriptBlocks(page)).toHaveLength(exampleBlocks(page).length);
    },
  );

  it.each(
    documentationPages()
      .flatMap((page) => exampleBlocks(page))
      .map((block) => [`${block.page}: ${block.file}#${block.region}`, block] as const),
  )("%s matches its example file", (_label, block) => {
    expect(block.code).toBe(exampleRegion(block.file, block.region));
  });

  it("every example file is run by a test, directly or through another example", () => {
    const examples = new URL("../../examples/", import.meta.url);
    const names = readdirSync(examples).filter((name) => name.endsWith(".ts"));
    const tests = new URL("../", import.meta.url);
    const importers = [
      ...readdirSync(tests, { recursive: true, encoding: "utf8" })
        .filter((name) => name.endsWith(".ts") && !name.includes("node_modules"))
        .map((name) => readFileSync(new URL(name, tests), "utf8")),
      ...names.map((name) => readFileSync(new URL(name, examples), "utf8")),
    ];
    const unrun = names.filter((name) => {
      const stem = name.replace(/\.ts$/, "");
      const ways = [`examples/${stem}"`, `examples/${stem}.ts"`, `"./${stem}"`];
      return !importers.some((text) => ways.some((way) => text.includes(way)));
    });
    expect(unrun).toEqual([]);
  });
});

describe("README and docs/ examples run", () => {
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

    // Review helper-59 (2026-12-04): the recipe answered "busy" to an outage too. A wrong token is
    // refused at once (one request), where a dead port would take the client's retries.
    process.env.UPSTASH_REDIS_REST_TOKEN = "not-the-token";
    try {
      await expect(example.handleOperation()).rejects.toMatchObject({ reason: "redis-error" });
    } finally {
      process.env.UPSTASH_REDIS_REST_TOKEN = inject("upstashToken");
    }
  });

  it("hand-off: a second Lock seeded with the uuid extends and releases", async () => {
    const example = await import("../../examples/handoff");
    const messages: { uuid: string }[] = [];
    example.queue.enqueue = async (message) => {
      messages.push(message);
    };
    const uuid = await example.startJob();
    expect(uuid).toEqual(expect.any(String));
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
      await within(abortTime(signal), 5_000, "the loss to be noticed");
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
      // 1 s: long enough that all 5 permits are out at once on a loaded machine too.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      running -= 1;
      return `summary of ${text}`;
    };
    const texts = Array.from({ length: 12 }, (_, index) => `text ${index}`);
    const answers = await Promise.all(texts.map((text) => example.summarize(text)));
    expect(answers).toEqual(texts.map((text) => `summary of ${text}`));
    expect(most).toBe(5);
  });

  it("fair lock: workers drain the queue one at a time, in the order they asked", async () => {
    const example = await import("../../examples/fair-lock");
    const line = companionKey("queue:drain", ":queue");
    let running = 0;
    let overlapped = false;
    const order: string[] = [];
    let letFirstFinish = () => {};
    const firstMayFinish = new Promise<void>((resolve) => {
      letFirstFinish = resolve;
    });
    example.work.processNextBatch = async (worker) => {
      running += 1;
      overlapped ||= running > 1;
      order.push(worker);
      // The first holder keeps the lock until everyone else stands in line.
      if (worker === "a") await firstMayFinish;
      else await pause(20);
      running -= 1;
      return 1;
    };
    const batches = [example.drainBatch("a")];
    await waitUntil(() => order.length === 1, "the first worker to hold the lock");
    for (const [ahead, worker] of ["b", "c", "d"].entries()) {
      batches.push(example.drainBatch(worker));
      await waitUntil(async () => (await redis.zcard(line)) === ahead + 1, `${worker} to stand in line`);
    }
    letFirstFinish();
    expect(await within(Promise.all(batches), 10_000, "the workers' batches")).toEqual([1, 1, 1, 1]);
    expect(overlapped).toBe(false);
    // In arrival order, which a plain Lock does not promise: whoever retries first after a release wins.
    expect(order).toEqual(["a", "b", "c", "d"]);
  });
  it("semaphore with await using: one permit for the block, given back after a return and after a throw", async () => {
    const example = await import("../../examples/semaphore");
    const permitKeys = Array.from({ length: 5 }, (_, index) =>
      companionKey("paid-api", `:permit:${index + 1}`),
    );
    const held = async () =>
      (await Promise.all(permitKeys.map((key) => redis.exists(key)))).reduce((a, b) => a + b, 0);
    const seen: number[] = [];
    example.work.callPaidApi = async (text, signal) => {
      expect(signal.aborted).toBe(false);
      seen.push(await held());
      return `summary of ${text}`;
    };
    expect(await example.summarizeBoth("a", "b")).toEqual(["summary of a", "summary of b"]);
    expect(seen).toEqual([1, 1]);
    expect(await held()).toBe(0);

    const failure = new Error("the paid API failed");
    example.work.callPaidApi = async () => {
      throw failure;
    };
    await expect(example.summarizeBoth("a", "b")).rejects.toBe(failure);
    expect(await held()).toBe(0);
  });

  it("semaphore permit(uuid): a permit taken elsewhere is released through its uuid, once", async () => {
    const { Semaphore } = await import("@upstash/lock");
    const { givePermitBack } = await import("../../examples/semaphore");
    const uuid = crypto.randomUUID();
    const elsewhere = new Semaphore({ id: "paid-api", redis, limit: 5 });
    expect(await elsewhere.acquire({ uuid })).toBeDefined();
    expect(await givePermitBack(uuid)).toBe(true);
    expect(await givePermitBack(uuid)).toBe(false);
  });

  it("wake-ups: a long wait takes the lock on the release's announcement, not at its next poll", async () => {
    const { Lock } = await import("@upstash/lock");
    const example = await import("../../examples/wake-ups");
    let tookLock = false;
    example.work.exportEverything = async (signal) => {
      expect(signal.aborted).toBe(false);
      tookLock = true;
    };
    // Held long: each held try caps the next poll at the holder's lease end (review helper-198), so a 10 s lease
    // would bring that poll within the timer below on a slow setup.
    const holder = new Lock({ id: "nightly-export", redis, lease: 60_000 });
    await holder.acquireOrThrow();
    // Every request naming the lock from now until the release is one of the waiter's tries. Its subscription's
    // stream is tapped for the server's confirmation, seen here before the library reads it.
    const tries: { readonly sentAt: number; answered: boolean }[] = [];
    let watching = true;
    let confirmedAt = Number.POSITIVE_INFINITY;
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (url.includes("/subscribe/")) return tapped(await realFetch(input, init));
      const body = typeof init?.body === "string" ? init.body : "";
      if (!watching || !body.includes('"nightly-export"')) return realFetch(input, init);
      const attempt = { sentAt: performance.now(), answered: false };
      tries.push(attempt);
      try {
        return await realFetch(input, init);
      } finally {
        attempt.answered = true;
      }
    });
    const tapped = (response: Response) => {
      if (!response.body) return response;
      const decoder = new TextDecoder();
      let text = "";
      const tap = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          text += decoder.decode(chunk, { stream: true });
          if (text.includes("data: subscribe,")) confirmedAt = Math.min(confirmedAt, performance.now());
          controller.enqueue(chunk);
        },
      });
      const { status, statusText, headers } = response;
      return new Response(response.body.pipeThrough(tap), { status, statusText, headers });
    };
    try {
      const waiting = example.runNightlyExport();
      // Once its subscription is confirmed, the wait sends the poll covering the moments before, at once. Once
      // that poll was answered, its next is a safety poll maxDelay (10 s) later: only the announcement can hand
      // it a lock released before then. Order of events, not a fixed pause that assumed them.
      await waitUntil(
        () => tries.some((attempt) => attempt.sentAt > confirmedAt && attempt.answered),
        "the poll covering the subscription",
      );
      watching = false;
      // A plain timer due halfway to that safety poll (both later on a loaded machine, alike).
      const beforePoll = pause(5_000).then(() => "the safety poll came first");
      expect(await holder.release()).toBe(true);
      expect(await Promise.race([waiting, beforePoll])).toBe("done");
      expect(tookLock).toBe(true);
      expect(await redis.exists("nightly-export")).toBe(0);
    } finally {
      watching = false;
      vi.restoreAllMocks();
      await holder.release(); // after a failure: ends the wait (false when released above)
    }
  });
});
