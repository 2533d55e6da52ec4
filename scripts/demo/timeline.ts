// The run as the parent sees it, one track per worker, and how a track is drawn as a row of
// fixed-width columns: "█" while the worker holds the lock, "·" while it waits, blank otherwise.

import type { WorkerEvent } from "./protocol";

export type WorkerState =
  | "starting"
  | "ready"
  | "thinking"
  | "waiting"
  | "holding"
  | "done"
  | "stopped"
  | "failed";

/** An interval of holding or waiting; `to` is undefined while it is still going on. */
export interface Span {
  kind: "hold" | "wait";
  from: number;
  to: number | undefined;
}

export interface Track {
  name: string;
  state: WorkerState;
  spans: Span[];
  /** Every event of this worker, in arrival order, for the summary. */
  events: WorkerEvent[];
}

/** The tracks of the workers that contend for one lock. */
export interface TrackGroup {
  /** Shown above the group's rows; undefined when the run has a single lock. */
  title: string | undefined;
  tracks: Track[];
}

export function newTrack(name: string): Track {
  return { name, state: "starting", spans: [], events: [] };
}

function closeOpenSpan(track: Track, at: number): void {
  const last = track.spans.at(-1);
  if (last && last.to === undefined) last.to = at;
}

/** Updates a track with one of its worker's events. */
export function applyEvent(track: Track, event: WorkerEvent): void {
  track.events.push(event);
  switch (event.event) {
    case "ready":
      track.state = "ready";
      break;
    case "waiting":
      track.state = "waiting";
      track.spans.push({ kind: "wait", from: event.t, to: undefined });
      break;
    case "acquired":
      closeOpenSpan(track, event.t);
      track.state = "holding";
      track.spans.push({ kind: "hold", from: event.t, to: undefined });
      break;
    case "released":
      // Drawn as the critical section proper, the same interval the overlap check uses.
      closeOpenSpan(track, event.heldTo);
      track.state = "thinking";
      break;
    case "gave-up":
      closeOpenSpan(track, event.t);
      track.state = "thinking";
      break;
    case "error":
      closeOpenSpan(track, event.t);
      track.state = "failed";
      break;
    case "done":
      closeOpenSpan(track, event.t);
      track.state = "done";
      break;
  }
}

/** Marks a worker whose process ended without saying "done". */
export function markExited(track: Track, at: number, cleanly: boolean): void {
  closeOpenSpan(track, at);
  if (!cleanly) track.state = "failed";
  else if (track.state !== "failed") track.state = "done";
}

/**
 * Marks a worker stopped by an interrupt at `at`. An error after that point is not held against
 * it: Ctrl-C reaches the local redis-server too, so a worker may lose its server while releasing.
 */
export function markInterrupted(track: Track, at: number): void {
  // A wait the interrupt ended counts as one cut short: its worker exits without saying so (or errs, its
  // server gone with the interrupt). One begun after `at`, before the worker heard the stop, counts too.
  const finished = track.events.some((event) => event.event === "done" && !event.interrupted);
  const failedBefore = track.events.some((event) => event.event === "error" && event.t < at);
  const waits = track.events.filter((event) => ["waiting", "acquired", "gave-up"].includes(event.event));
  const open = waits.at(-1);
  if (open?.event === "waiting" && !finished && !failedBefore) {
    const t = Math.max(at, open.t);
    track.events.push({ event: "gave-up", worker: open.worker, t, waitedMs: t - open.t, cutShort: true });
    closeOpenSpan(track, t);
  }
  if (!finished && !failedBefore) track.state = "stopped";
}

/** How much of [from, to) the spans of `kind` cover, open spans counting up to `now`. */
function covered(spans: readonly Span[], kind: Span["kind"], from: number, to: number, now: number): number {
  let total = 0;
  for (const span of spans) {
    if (span.kind !== kind) continue;
    const end = Math.min(to, span.to ?? now);
    const start = Math.max(from, span.from);
    if (end > start) total += end - start;
  }
  return total;
}

/**
 * One column as a character. A column can hold the end of one worker's hold and the start of
 * the next worker's, so holds are drawn in half columns: "▌" is a hold in the first half only,
 * "▐" in the second half only. Two workers never get the same half unless they truly overlap.
 */
function cell(spans: readonly Span[], from: number, width: number, now: number): string {
  const half = width / 2;
  const left = covered(spans, "hold", from, from + half, now) / half;
  const right = covered(spans, "hold", from + half, from + width, now) / half;
  if (left >= 0.5 && right >= 0.5) return "█";
  if (left > 0 || right > 0) return left >= right ? "▌" : "▐";
  return covered(spans, "wait", from, from + width, now) > 0 ? "·" : " ";
}

/** The layout of a drawn timeline: where it starts, how many ms a column is, how many columns. */
export interface Scale {
  origin: number;
  msPerColumn: number;
  columns: number;
}

/**
 * Picks a column width for `spanMs` of run in at most `maxColumns`: 100 ms per column when that
 * fits, otherwise the next multiple of 50 ms that does.
 */
export function chooseScale(origin: number, spanMs: number, maxColumns: number): Scale {
  let msPerColumn = 100;
  const usable = Math.max(10, maxColumns);
  if (spanMs / msPerColumn > usable) msPerColumn = Math.ceil(spanMs / usable / 50) * 50;
  return { origin, msPerColumn, columns: Math.ceil(spanMs / msPerColumn) };
}

/** A track as one row of `scale.columns` characters; nothing is drawn after `now`. */
export function renderRow(track: Track, scale: Scale, now: number): string {
  let row = "";
  for (let column = 0; column < scale.columns; column++) {
    const from = scale.origin + column * scale.msPerColumn;
    row += from >= now ? " " : cell(track.spans, from, scale.msPerColumn, now);
  }
  return row;
}

/** A ruler for the rows: "0s", "1s", ... at the column where each second starts. */
export function renderAxis(scale: Scale): string {
  const ruler = Array.from({ length: scale.columns }, () => " ");
  const secondsShown = (scale.columns * scale.msPerColumn) / 1000;
  // Label every second, or every other one when the labels would touch.
  const step = 1000 / scale.msPerColumn < 4 ? 2 : 1;
  for (let second = 0; second < secondsShown; second += step) {
    const label = `${second}s`;
    const at = Math.round((second * 1000) / scale.msPerColumn);
    if (at + label.length > scale.columns) break;
    for (let i = 0; i < label.length; i++) ruler[at + i] = label[i] ?? " ";
  }
  return ruler.join("");
}
