import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoState } from "../../scripts/web-demo/page/view";
import { startWebDemo, type WebDemo } from "../../scripts/web-demo/server";
import { probe, skipIfUnavailable, titled } from "../runtimes/support/runtime-process";
import { CHROMIUM, launchChromium } from "../support/chromium";

// `npm run demo:web` in Debian's Chromium, driven by playwright-core (no browser is ever downloaded):
// the demo's server with its own redis-server and proxy on free ports, the page run in each mode,
// and every check read from the page itself (`window.demoState`, and the counters' DOM elements).
// Waits are bounded generously and nothing asserts how fast anything was.
// The README's picture is rewritten only on request (`UPDATE_SCREENSHOT=1`), so that a test run
// leaves the working tree clean; otherwise it goes to a temporary folder, checked all the same.
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? fileURLToPath(new URL("../../docs/web-demo.png", import.meta.url))
  : join(mkdtempSync(join(tmpdir(), "web-demo-")), "web-demo.png");
/** How long each mode runs; a fair lock's turns need a few rounds of every worker to even out. */
const PLAIN_MS = 4_000;
const SEMAPHORE_MS = 4_000;
const FAIR_MS = 10_000;
/** A freeze or kill plays out within a lease (3 s) and a handover; this bound is far above that. */
const INTERVENTION_MS = 20_000;

const availability = probe(CHROMIUM);

let demo: WebDemo | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!availability.available) return;
  demo = await startWebDemo();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await demo?.stop();
  }
});

const state = (page: Page) => page.evaluate(() => window.demoState as DemoState);

/** Awaits `wait`; when it fails (a timeout), the error says what was awaited and what the page showed. */
async function explained<T>(page: Page, what: string, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (error) {
    const { log, perWorker, store, errors } = (await state(page)) ?? {};
    const shown = JSON.stringify({ log, perWorker, store, errors }, null, 2);
    throw new Error(
      `${what}: ${error instanceof Error ? error.message : String(error)}\nThe page showed ${shown}`,
    );
  }
}

/** Waits until the page runs a fresh run with these settings (each change of a control restarts). */
async function runningWith(
  page: Page,
  after: string | undefined,
  kind: string,
  fair: boolean,
  limit: number,
) {
  const fresh = page.waitForFunction(
    ([after, kind, fair, limit]) => {
      const s = window.demoState;
      return s !== undefined && s.runId !== after && s.kind === kind && s.fair === fair && s.limit === limit;
    },
    [after, kind, fair, limit] as const,
    { timeout: 15_000 },
  );
  await explained(page, `a run of ${kind} (fair: ${fair}, limit ${limit})`, fresh);
  return state(page);
}

/** Asserts what must hold in every mode: work done, nothing overlapped, no worker failed. */
function expectClean(s: DemoState): void {
  expect(s.errors).toEqual([]);
  expect(s.sections).toBeGreaterThan(0);
  expect(s.overlaps).toBe(0);
  expect(s.maxOccupancy).toBeLessThanOrEqual(s.limit);
}

/** Freezes the holder and waits for the fenced store to refuse its late write, on the page's counter. */
async function freezeUntilRefused(page: Page): Promise<DemoState> {
  await page.getByTestId("freeze").click();
  const refused = page.waitForFunction(
    () => Number(document.querySelector('[data-testid="refused"]')?.textContent) > 0,
    undefined,
    { timeout: INTERVENTION_MS },
  );
  await explained(page, "the frozen holder's late write refused", refused);
  const s = await state(page);
  expect(s.store.refused).toBeGreaterThan(0);
  expect(s.store.refused).toBeLessThanOrEqual(s.losses);
  // The frozen holder's lease ran out and its signal said so.
  expect(s.losses).toBeGreaterThan(0);
  expect(s.log.some((line) => / REFUSED /.test(line))).toBe(true);
  return s;
}

describe("The web demo in headless Chromium", () => {
  it(titled(
    "runs a lock, a semaphore and a fair lock without overlaps; fencing refuses a frozen holder",
    availability,
  ), async (context) => {
    skipIfUnavailable(context, availability);
    const page = await (browser as Browser).newPage({ viewport: { width: 900, height: 830 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      // Chromium logs every 4xx as "Failed to load resource" (a NOSCRIPT answer is one).
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(message.text());
      }
    });
    await page.goto((demo as WebDemo).url);

    // A plain Lock, as the page starts; then a frozen holder, then a killed one.
    let s = await runningWith(page, undefined, "lock", false, 1);
    expect(s.wakeUps).toBe(true);
    await page.waitForTimeout(PLAIN_MS);
    s = await state(page);
    expectClean(s);
    expect(s.lock.commands).toBeGreaterThan(0);
    expect(s.lock.perSection).toBeGreaterThan(0);
    expect(s.handover.count).toBeGreaterThan(0);
    expectClean(await freezeUntilRefused(page));
    await page.getByTestId("kill").click();
    const takenOver = page.waitForFunction(
      () => {
        const dead = window.demoState?.perWorker.find((worker) => worker.phase === "dead");
        return dead && window.demoState?.log.some((line) => line.includes(`took over from ${dead.name}`));
      },
      undefined,
      { timeout: INTERVENTION_MS },
    );
    await explained(page, "another worker taking over from the killed one", takenOver);
    expectClean(await state(page));

    // A Semaphore of 3 permits.
    await page.getByTestId("kind").selectOption("semaphore");
    await page.getByTestId("limit").fill("3");
    await page.getByTestId("limit").dispatchEvent("change");
    s = await runningWith(page, s.runId, "semaphore", false, 3);
    await page.waitForTimeout(SEMAPHORE_MS);
    s = await state(page);
    expectClean(s);
    expect(s.holders).toHaveLength(3);
    // Several workers were inside at once, as the semaphore allows.
    expect(s.maxOccupancy).toBeGreaterThan(1);

    // A FairLock: turns go round, and the line is read from its sorted set.
    await page.getByTestId("kind").selectOption("lock");
    await page.getByTestId("fair").check();
    s = await runningWith(page, s.runId, "lock", true, 1);
    let sawLine = false;
    const fairEnds = Date.now() + FAIR_MS;
    while (Date.now() < fairEnds) {
      await page.waitForTimeout(500);
      sawLine ||= (await state(page)).line.length > 0;
    }
    s = await state(page);
    expectClean(s);
    expect(sawLine).toBe(true);
    expect(s.fairness.least).toBeGreaterThanOrEqual(s.fairness.mean / 2);
    expectClean(await freezeUntilRefused(page));

    // A moment for the page to draw the refusal, then the picture for the README.
    await page.waitForTimeout(300);
    await page.screenshot({ path: SCREENSHOT });
    expect(statSync(SCREENSHOT).size).toBeLessThan(150_000);
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
