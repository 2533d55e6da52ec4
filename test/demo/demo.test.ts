// `npm run demo` and `npm run demo:web` as a newcomer runs them: each starts its own redis-server and
// proxy, and ends cleanly, run to its end or interrupted. Waits are bounded; nothing asserts speed.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { WorkerEvent } from "../../scripts/demo/protocol";
import { summarizeWorker } from "../../scripts/demo/summary";
import { applyEvent, markInterrupted, newTrack } from "../../scripts/demo/timeline";
import { waitUntil } from "../faults/support/time";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Starts a script as its npm script does (`node --import tsx`: no npm, npx or tsx parent in between, which
 * would not pass signals on, or would SIGKILL it 30 ms later), collecting its output.
 */
function start(script: string, args: string[] = []): { child: ChildProcess; output: () => string } {
  // Its own process group, so that a hung one is killed with everything it started.
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  return { child, output: () => output };
}

/** The exit code (or signal) once it exits by itself within `ms`; "hung" (and killed, group and all) otherwise. */
function exitWithin(child: ChildProcess, ms: number): Promise<number | string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      resolve("hung");
    }, ms);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal ?? "unknown");
    });
  });
}

describe("npm run demo", () => {
  it("runs to its end: no overlap, the run's keys deleted, its stack stopped, exit 0", async () => {
    const { child, output } = start("scripts/demo.ts", ["--seconds", "2", "--workers", "2"]);
    expect(await exitWithin(child, 50_000)).toBe(0);
    expect(output()).toMatch(/Overlaps: 0/);
    expect(output()).toMatch(/Deleted the run.s/);
    expect(output()).toMatch(/Stopped the local stack/);
  }, 60_000);

  it("counts a wait an interrupt ended as one cut short (its worker exits without saying so)", () => {
    const track = newTrack("worker-1");
    const events: WorkerEvent[] = [
      { event: "ready", worker: "worker-1", t: 0 },
      { event: "waiting", worker: "worker-1", t: 1_000 },
    ];
    for (const event of events) applyEvent(track, event);
    markInterrupted(track, 3_000);
    const summary = summarizeWorker(track);
    expect([summary.waits, summary.stoppedWaiting, summary.waitMaxMs]).toEqual([1, 1, 2_000]);
    expect(track.state).toBe("stopped");
    // A wait begun just after the interrupt's moment (its worker had not heard the stop yet) counts too.
    const late = newTrack("worker-2");
    applyEvent(late, { event: "waiting", worker: "worker-2", t: 3_005 });
    markInterrupted(late, 3_000);
    expect(summarizeWorker(late).waits).toBe(1);
  });
});

describe("npm run demo:web", () => {
  it("ends by itself on a Ctrl-C that comes while it starts", async () => {
    const { child, output } = start("scripts/web-demo/cli.ts");
    await waitUntil(
      () => output().includes("starting a redis-server"),
      "the demo starting its redis-server",
      {
        timeoutMs: 20_000,
        intervalMs: 20,
      },
    );
    child.kill("SIGINT");
    expect(await exitWithin(child, 20_000)).not.toBe("hung");
  }, 60_000);
});
