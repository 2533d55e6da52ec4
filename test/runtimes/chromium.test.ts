import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bundleUpstashRedis, html, js, serveAssets } from "../../scripts/support/static-site";
import { within } from "../faults/support/time";
import { CHROMIUM, launchChromium } from "../support/chromium";
import type { ScenarioResult } from "./fixtures/scenario";
import { type Consumer, compileScenario, fixture, installBuiltPackage } from "./support/built-package";
import { expectScenarioPassed } from "./support/expect-scenario";
import { probe, skipIfUnavailable, titled, uniquePrefix } from "./support/runtime-process";

// Debian's Chromium (`apt-get install chromium`), driven by playwright-core; no browser is ever downloaded.
// A local server on 127.0.0.1 serves the pages, the installed package's dist/ and an ESM bundle of
// @upstash/redis made on the fly; the pages call the suite's proxy on another port, so every request is
// cross-origin and goes through a CORS preflight, as a page calling Upstash does.
const availability = probe(CHROMIUM);

let consumer: Consumer;
let server: Server | undefined;
let pageOrigin: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!availability.available) return;
  consumer = await installBuiltPackage();
  server = await serveAssets({
    "/favicon.ico": { type: "image/x-icon", body: "" },
    "/iife.html": html(fixture("iife.html")),
    "/esm.html": html(fixture("esm.html")),
    "/scenario.mjs": js(await compileScenario("esm", "native")),
    "/lock/dist/index.global.js": js(readFileSync(join(consumer.packageDir, "dist/index.global.js"), "utf8")),
    "/lock/dist/index.js": js(readFileSync(join(consumer.packageDir, "dist/index.js"), "utf8")),
    "/vendor/upstash-redis.mjs": js(await bundleUpstashRedis(consumer.dir)),
  });
  pageOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    server?.close();
    consumer?.remove();
  }
});

describe("Headless Chromium, the built package in a page", () => {
  it(
    titled("IIFE through <script>: global UpstashLock with a fetch-based EvalClient", availability),
    async (context) => {
      skipIfUnavailable(context, availability);
      expectScenarioPassed(await runPage("iife.html"), /HeadlessChrome\//, "native");
    },
  );

  it(
    titled("ESM through <script type=module>: dist/index.js with @upstash/redis", availability),
    async (context) => {
      skipIfUnavailable(context, availability);
      expectScenarioPassed(await runPage("esm.html"), /HeadlessChrome\//, "native");
    },
  );
});

/** Opens a page in a new context and waits for the scenario it starts; page errors fail the test. */
async function runPage(name: string): Promise<ScenarioResult> {
  const upstashUrl = inject("upstashUrl");
  expect(new URL(upstashUrl).origin).not.toBe(pageOrigin);
  const context = await (browser as Browser).newContext();
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      // Chromium logs every 4xx as "Failed to load resource"; a NOSCRIPT answer (400) is expected the first
      // time a script is sent by its SHA-1. A CORS refusal is logged differently and is kept.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(message.text());
      }
    });
    const query = new URLSearchParams({
      url: upstashUrl,
      token: inject("upstashToken"),
      prefix: uniquePrefix(name),
    });
    await page.goto(`${pageOrigin}/${name}?${query}`);
    await page.waitForFunction(() => "scenario" in window, undefined, { timeout: 10_000 });
    const result = await within(
      page.evaluate(() => (window as unknown as { scenario: Promise<ScenarioResult> }).scenario),
      20_000,
      `the scenario in ${name}`,
    );
    expect(problems).toEqual([]);
    return result;
  } finally {
    await context.close();
  }
}
