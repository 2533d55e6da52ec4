// How the run is shown. On a terminal the timeline is redrawn in place ten times a second; in a
// pipe or CI log, where cursor movement would be garbage, each event is printed as a log line and
// the timeline is printed once at the end.

import type { WorkerEvent } from "./protocol";
import { chooseScale, renderAxis, renderRow, type Scale, type Track, type TrackGroup } from "./timeline";

const REDRAW_MS = 100;
/** Workers may still hold the lock when the deadline passes; the timeline leaves room for that. */
const TAIL_MS = 600;
const LABEL_WIDTH = 11;
/** Room for the worker's state after its row, e.g. " thinking". */
const STATUS_WIDTH = 10;

export interface View {
  /** The run begins: the workers were told to go at `origin` and stop starting rounds after `seconds`. */
  start(origin: number, seconds: number): void;
  /** A worker event arrived; `track` already includes it. */
  event(track: Track, event: WorkerEvent): void;
  /** The run is over: draw the complete timeline, up to `stoppedAt` when it was cut short. */
  finish(stoppedAt?: number): void;
}

export interface ViewOptions {
  /** One group per lock, drawn one above the other on a shared time axis. */
  groups: readonly TrackGroup[];
  out: NodeJS.WriteStream;
}

const COLORS = [36, 35, 33, 32, 34, 31];

function paint(text: string, index: number, color: boolean): string {
  if (!color) return text;
  return `\x1b[${COLORS[index % COLORS.length]}m${text}\x1b[39m`;
}

/** The timeline block: ruler, one row per worker under its group's title, legend. */
function timelineLines(groups: readonly TrackGroup[], scale: Scale, now: number, color: boolean): string[] {
  const pad = " ".repeat(LABEL_WIDTH);
  const rows = groups.flatMap(({ title, tracks }) => {
    const group = tracks.map((track, index) => {
      const bar = paint(renderRow(track, scale, now), index, color);
      return `${track.name.padEnd(LABEL_WIDTH - 1)}│${bar}│ ${track.state}`;
    });
    return title === undefined ? group : [title, ...group];
  });
  const legend = `█ holds the lock   · waits for it   one column = ${scale.msPerColumn} ms`;
  return [`${pad}${renderAxis(scale)}`.trimEnd(), ...rows, `${pad}${legend}`];
}

/** The whole run, from the go to the last event, so that nothing is cut off at the end. */
function finalSpan(
  groups: readonly TrackGroup[],
  origin: number,
  seconds: number,
  stoppedAt?: number,
): number {
  let last = stoppedAt ?? origin + seconds * 1000 + TAIL_MS;
  for (const track of groups.flatMap((group) => group.tracks)) {
    for (const span of track.spans) last = Math.max(last, span.to ?? span.from);
  }
  return last - origin;
}

function maxColumns(out: NodeJS.WriteStream): number {
  const width = out.isTTY ? out.columns : 120;
  return width - LABEL_WIDTH - STATUS_WIDTH - 2;
}

/** Redraws the timeline in place on a terminal. */
export function liveView({ groups, out }: ViewOptions): View {
  const color = !("NO_COLOR" in process.env);
  let origin = 0;
  let seconds = 0;
  let drawnLines = 0;
  let timer: NodeJS.Timeout | undefined;
  const showCursor = () => out.write("\x1b[?25h");

  const draw = (scale: Scale, now: number) => {
    const lines = timelineLines(groups, scale, now, color);
    // Back to the first line of the previous drawing, then overwrite line by line.
    let text = drawnLines > 0 ? `\x1b[${drawnLines}A` : "";
    for (const line of lines) text += `\r\x1b[2K${line}\n`;
    out.write(text);
    drawnLines = lines.length;
  };
  const liveScale = () => chooseScale(origin, seconds * 1000 + TAIL_MS, maxColumns(out));

  return {
    start(at, runSeconds) {
      origin = at;
      seconds = runSeconds;
      out.write("\x1b[?25l");
      // Ctrl-C or a crash must not leave the user's terminal without a cursor.
      process.once("exit", showCursor);
      draw(liveScale(), Date.now());
      timer = setInterval(() => draw(liveScale(), Date.now()), REDRAW_MS);
    },
    event() {
      // The next redraw shows it.
    },
    finish(stoppedAt) {
      if (timer) clearInterval(timer);
      if (origin === 0) return;
      const span = finalSpan(groups, origin, seconds, stoppedAt);
      draw(chooseScale(origin, span, maxColumns(out)), origin + span);
      showCursor();
    },
  };
}

function describe(event: WorkerEvent): string | undefined {
  switch (event.event) {
    case "ready":
      return undefined;
    case "waiting":
      return "waiting for the lock";
    case "acquired":
      return `acquired the lock after ${event.waitedMs} ms`;
    case "released":
      return `released it after ${event.heldTo - event.heldFrom} ms (release() -> ${event.released}, occupancy ${event.occupancy})`;
    case "gave-up":
      return event.cutShort
        ? `stopped waiting after ${event.waitedMs} ms: the run is over`
        : `gave up after ${event.waitedMs} ms`;
    case "error":
      return `FAILED: ${event.message}`;
    case "done":
      return event.interrupted ? "stopped" : "done";
  }
}

/** Prints one log line per event, then the timeline once. */
export function logView({ groups, out }: ViewOptions): View {
  let origin = 0;
  let seconds = 0;
  return {
    start(at, runSeconds) {
      origin = at;
      seconds = runSeconds;
    },
    event(track, event) {
      const text = describe(event);
      if (text === undefined || origin === 0) return;
      const elapsed = `${((event.t - origin) / 1000).toFixed(3)}s`.padStart(8);
      out.write(`  ${elapsed}  ${track.name.padEnd(LABEL_WIDTH - 1)} ${text}\n`);
    },
    finish(stoppedAt) {
      if (origin === 0) return;
      const span = finalSpan(groups, origin, seconds, stoppedAt);
      const scale = chooseScale(origin, span, maxColumns(out));
      out.write(`\nTimeline:\n${timelineLines(groups, scale, origin + span, false).join("\n")}\n`);
    },
  };
}
