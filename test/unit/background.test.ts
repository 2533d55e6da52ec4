import { describe, expect, it, vi } from "vitest";
import { newBackground } from "../../src/background";

describe("Background", () => {
  it("pending waits for work added while it waits, and never rejects", async () => {
    const background = newBackground(undefined);
    let finishSecond!: () => void;
    let settled = false;
    background.add(
      Promise.reject(new Error("ignored")).finally(() =>
        background.add(new Promise<void>((resolve) => (finishSecond = resolve))),
      ),
    );
    const pending = background.pending.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(false);
    finishSecond();
    await pending;
    expect(settled).toBe(true);
  });

  it("hands each piece of work to waitUntil at once, and survives a waitUntil that throws", () => {
    const waitUntil = vi.fn(() => {
      throw new Error("platform hook bug");
    });
    const background = newBackground(waitUntil);
    expect(() => background.add(Promise.resolve())).not.toThrow();
    expect(waitUntil).toHaveBeenCalledTimes(1);
  });
});
