// Puts a run's numbers, keys, fair line and log into the page, and builds `window.demoState`, the
// same numbers as plain data for whoever drives the page (the browser test).

import type { Run } from "./run";
import { drawTimeline } from "./timeline";

/** The element with this `data-testid`; the page's markup has every one of them. */
export function byTestId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.querySelector<T>(`[data-testid="${id}"]`);
  if (!found) throw new Error(`the page has no element with data-testid="${id}"`);
  return found;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
};
const ms = (value: number | undefined) => (value === undefined ? "–" : `${Math.round(value)} ms`);
const seconds = (value: number) => `${(Math.max(0, value) / 1000).toFixed(1)} s`;

/** Everything the page shows about `run`, as plain data. */
export function snapshot(run: Run) {
  const { kind, fair, limit, workers } = run.settings;
  const lock = run.lockTraffic();
  const sections = run.sections;
  return {
    runId: run.keys.id,
    kind,
    fair,
    limit,
    workers,
    wakeUps: true,
    elapsedMs: Math.round(performance.now() - run.startedAt),
    sections,
    overlaps: run.overlaps,
    maxOccupancy: run.maxOccupancy,
    losses: run.losses,
    gaveUp: run.gaveUp,
    lostReleases: run.lostReleases,
    handover: { count: run.handoversMeasured, medianMs: median(run.handovers), lastMs: run.handovers.at(-1) },
    lock: { ...lock, perSection: sections === 0 ? undefined : lock.commands / sections },
    checks: { commands: run.checksMeter.commands },
    store: { accepted: run.store.accepted, refused: run.store.refused },
    fairness: run.fairness(),
    perWorker: run.workers.map(({ name, phase, sections }) => ({ name, phase, sections })),
    holders: run.holders.map(({ key, fingerprint, worker, pttl }) => ({
      key,
      fingerprint,
      worker: worker?.name,
      pttl,
    })),
    line: run.line.map(({ fingerprint, worker }) => ({ fingerprint, worker: worker?.name })),
    log: [...run.log],
    errors: [...run.errors],
  };
}

export type DemoState = ReturnType<typeof snapshot>;

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function renderHolders(run: Run): void {
  const rows = run.holders.map(({ key, fingerprint, worker, pttl }) => {
    const tr = document.createElement("tr");
    const holding = worker?.holding;
    const who = fingerprint ? `${worker?.name ?? "?"} · ${fingerprint}` : "free";
    // A frozen or dead holder is the point of the demo; any other phase is a read a moment old.
    const gone = worker?.phase === "frozen" || worker?.phase === "dead";
    tr.append(
      cell(key, "mono"),
      cell(gone ? `${who} (${worker.phase})` : who, gone ? "mono alert" : "mono"),
      cell(holding ? seconds(holding.remainingMs) : "–"),
      cell(pttl >= 0 ? seconds(pttl) : "–"),
      cell(fingerprint ? String(worker?.fencingToken ?? "?") : "–", "mono"),
    );
    return tr;
  });
  byTestId("holders").replaceChildren(...rows);
}

function renderLine(run: Run): void {
  const panel = byTestId("fair-panel");
  panel.hidden = !run.settings.fair;
  const chips = run.line.map(({ fingerprint, worker }, place) => {
    const li = document.createElement("li");
    li.textContent = `${place + 1}. ${worker?.name ?? "?"} · ${fingerprint}`;
    return li;
  });
  byTestId("fair-line").replaceChildren(...chips);
  byTestId("fair-empty").hidden = chips.length > 0;
}

export function render(run: Run): void {
  const state = snapshot(run);
  const set = (id: string, text: string) => {
    byTestId(id).textContent = text;
  };
  set("sections", String(state.sections));
  set("overlaps", String(state.overlaps));
  byTestId("overlaps").classList.toggle("alert", state.overlaps > 0);
  set("max-occupancy", `${state.maxOccupancy} of ${state.limit} allowed`);
  set("handover", ms(state.handover.medianMs));
  set("handover-last", `last ${ms(state.handover.lastMs)}, ${state.handover.count} measured`);
  set("commands-per-section", state.lock.perSection === undefined ? "–" : state.lock.perSection.toFixed(1));
  set(
    "commands",
    `${state.lock.commands} commands in ${state.lock.requests} requests, ${state.lock.subscriptions} wake-up streams; ` +
      `the page's own checks: ${state.checks.commands}`,
  );
  set("refused", String(state.store.refused));
  set("accepted", `${state.store.accepted} accepted`);
  set("losses", String(state.losses));
  set("least-served", `${state.fairness.least} / ${state.fairness.mean.toFixed(1)}`);
  set("log", state.log.join("\n"));
  set("errors", state.errors.slice(-3).join("\n"));
  renderHolders(run);
  renderLine(run);
  drawTimeline(byTestId<HTMLCanvasElement>("timeline"), run.workers, performance.now());
}
