import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { abortable, sleep, TIMED_OUT, within } from "../../src/race";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("within", () => {
  it("settles like the work when it answers in time, and hands nothing to onLate", async () => {
    const work = deferred<string>();
    const onLate = vi.fn();
    const result = within(work.promise, 100, onLate);
    work.resolve("answer");
    await expect(result).resolves.toBe("answer");
    vi.advanceTimersByTime(200);
    expect(onLate).not.toHaveBeenCalled();
  });

  it("rejects like the work when it fails in time", async () => {
    const work = deferred<string>();
    const result = within(work.promise, 100, () => {});
    work.reject(new Error("refused"));
    await expect(result).rejects.toThrow("refused");
  });

  it("resolves TIMED_OUT a turn after the time is up, and hands the work to onLate to clean up after it", async () => {
    const work = deferred<string>();
    const onLate = vi.fn();
    const result = within(work.promise, 100, onLate);
    vi.advanceTimersByTime(100);
    expect(onLate).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    await expect(result).resolves.toBe(TIMED_OUT);
    expect(onLate).toHaveBeenCalledWith(work.promise);
  });

  it("reads an answer that came while its timer was due (the process did not run) before calling it late", async () => {
    // Review helper-117: on a thaw the due timer ran before the reply was read, and a try Redis had answered
    // was called unanswered. Here the answer lands in the timer's own turn, after the timer.
    const work = deferred<string>();
    const onLate = vi.fn();
    const result = within(work.promise, 100, onLate);
    setTimeout(() => work.resolve("answer"), 100);
    await vi.advanceTimersByTimeAsync(101); // microtasks run between timers, as in a real event loop
    await expect(result).resolves.toBe("answer");
    expect(onLate).not.toHaveBeenCalled();
  });

  it("times out a turn later when no time is left", async () => {
    const result = within(new Promise<never>(() => {}), 0, () => {});
    vi.advanceTimersByTime(1);
    await expect(result).resolves.toBe(TIMED_OUT);
  });

  it("with an infinite limit, is the work itself: no timer at all", () => {
    const work = Promise.resolve(1);
    expect(within(work, Number.POSITIVE_INFINITY, () => {})).toBe(work);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("leaves no timer behind once the work answered (cleared in the same tick, before any timer runs)", async () => {
    await within(Promise.resolve(1), 10_000, () => {});
    for (let i = 0; i < 3; i++) await Promise.resolve();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("abortable", () => {
  it("without a signal, is the work itself", () => {
    const work = Promise.resolve(1);
    expect(abortable(work, undefined, () => {})).toBe(work);
  });

  it("rejects with the signal's reason the moment it aborts, and hands the work to onAbandoned", async () => {
    const work = deferred<string>();
    const controller = new AbortController();
    const onAbandoned = vi.fn();
    const result = abortable(work.promise, controller.signal, onAbandoned);
    const reason = new Error("cancelled by the caller");
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(onAbandoned).toHaveBeenCalledWith(work.promise);
  });

  it("rejects at once on a signal aborted before the call", async () => {
    const controller = new AbortController();
    controller.abort("gone");
    const onAbandoned = vi.fn();
    await expect(abortable(new Promise(() => {}), controller.signal, onAbandoned)).rejects.toBe("gone");
    expect(onAbandoned).toHaveBeenCalledTimes(1);
  });

  it("settles like the work otherwise, and a later abort abandons nothing", async () => {
    const controller = new AbortController();
    const onAbandoned = vi.fn();
    await expect(abortable(Promise.resolve("done"), controller.signal, onAbandoned)).resolves.toBe("done");
    controller.abort();
    expect(onAbandoned).not.toHaveBeenCalled();
  });
});

describe("sleep", () => {
  // Found by a review: `Debounce`'s wait went to one setTimeout, which fires at once past 2^31 - 1 ms.
  it("waits longer than one timer holds, in steps, then resolves", async () => {
    const ms = 2 ** 31 + 5_000;
    let done = false;
    void sleep(ms).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(ms - (2 ** 31 - 1) - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });
});
