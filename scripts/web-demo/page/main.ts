// The page's entry: reads the server's config, wires the controls, runs one Run at a time and
// redraws it ten times a second. Loaded as a module; `@upstash/lock` is the built package
// (dist/index.js) and `@upstash/redis` its ESM build, both through the page's import map.

import { installMeteredFetch } from "./metered-fetch";
import { Run, type RunSettings } from "./run";
import { byTestId, type DemoState, render, snapshot } from "./view";

/** What the server tells the page: its local stack. */
interface ServerConfig {
  readonly url: string;
  readonly token: string;
}

declare global {
  interface Window {
    /** The numbers the page shows, as plain data, fresh on every read; undefined before the first run. */
    readonly demoState: DemoState | undefined;
  }
}

const REDRAW_MS = 100;

/**
 * The browser opens at most 6 HTTP/1.1 connections per host and port, and every waiting worker keeps
 * one open for its wake-up stream: on one host name, six waiting workers would leave no connection
 * for anything else. So each worker reaches the local proxy under a host name of its own,
 * `w1.localhost`, `w2.localhost`..., which browsers resolve to the loopback themselves. A browser
 * that does not gets the shared URL. A remote database gets it too: over HTTPS a browser multiplexes
 * requests on one HTTP/2 connection where the server offers it (if it does not, waits queue there).
 */
async function localWorkerUrls(config: ServerConfig): Promise<(index: number) => string> {
  const shared = () => config.url;
  const url = new URL(config.url);
  const per = (index: number) => {
    const own = new URL(url);
    own.hostname = `w${index + 1}.localhost`;
    return own.origin;
  };
  try {
    const response = await fetch(per(0), {
      method: "POST",
      headers: { authorization: `Bearer ${config.token}` },
      body: '["PING"]',
    });
    return response.ok ? per : shared;
  } catch {
    return shared;
  }
}

function number(id: string, min: number, max: number, fallback: number): number {
  const input = byTestId<HTMLInputElement>(id);
  const value = Math.round(Number(input.value));
  if (!Number.isFinite(value)) return fallback;
  const clamped = Math.min(max, Math.max(min, value));
  input.value = String(clamped);
  return clamped;
}

async function main(): Promise<void> {
  const config = (await (await fetch("/config.json")).json()) as ServerConfig;
  const localUrls = await localWorkerUrls(config);
  // After the probe above, so that only the clients' requests are counted.
  installMeteredFetch();
  const local = { url: config.url, token: config.token, workerUrl: localUrls };
  let database = local;
  byTestId("server").textContent = `local stack ${config.url}`;

  const settings = (): RunSettings => {
    const kind = byTestId<HTMLSelectElement>("kind").value === "semaphore" ? "semaphore" : "lock";
    byTestId("limit")
      .closest("label")
      ?.toggleAttribute("hidden", kind !== "semaphore");
    return {
      kind,
      fair: byTestId<HTMLInputElement>("fair").checked,
      limit: kind === "semaphore" ? number("limit", 1, 10, 2) : 1,
      workers: number("workers", 1, 16, 6),
      ...database,
    };
  };

  let run: Run | undefined;
  // One restart at a time, and the last request wins: changes made meanwhile join the next one.
  let restarting: Promise<void> = Promise.resolve();
  const restart = () => {
    restarting = restarting
      .then(async () => {
        const next = settings();
        await run?.stop();
        run = undefined;
        run = new Run(next);
      })
      .catch((error: unknown) => {
        byTestId("errors").textContent = `Could not start: ${String(error)}`;
      });
    return restarting;
  };

  Object.defineProperty(window, "demoState", { get: () => run && snapshot(run) });
  for (const id of ["kind", "fair", "limit", "workers"]) byTestId(id).addEventListener("change", restart);
  byTestId("restart").addEventListener("click", restart);
  byTestId("freeze").addEventListener("click", () => run?.freezeHolder());
  byTestId("kill").addEventListener("click", () => run?.killHolder());
  byTestId("release").addEventListener("click", () => run?.releaseHolder());
  byTestId("connect").addEventListener("submit", (event) => {
    event.preventDefault();
    const url = byTestId<HTMLInputElement>("db-url").value.trim();
    const token = byTestId<HTMLInputElement>("db-token").value.trim();
    // Kept in this variable only: never stored, never sent anywhere but to that database.
    database = url && token ? { url, token, workerUrl: () => url } : local;
    byTestId("server").textContent =
      url && token ? `your database ${new URL(url).host}` : `local stack ${config.url}`;
    void restart();
  });
  window.addEventListener("pagehide", () => void run?.stop());

  await restart();
  setInterval(() => {
    if (run) render(run);
  }, REDRAW_MS);
}

main().catch((error: unknown) => {
  byTestId("errors").textContent = `The page failed to start: ${String(error)}`;
});
