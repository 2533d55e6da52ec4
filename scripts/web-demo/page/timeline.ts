// The timeline: one row per worker, its waits and holds over the last seconds, drawn on a canvas
// (the terminal demo draws the same with characters, scripts/demo/timeline.ts).

import type { SpanKind, Worker } from "./worker";

/** Seconds of history shown. */
const WINDOW_MS = 12_000;
const ROW_PX = 18;
const LABEL_PX = 44;

export const SPAN_COLORS: Readonly<Record<SpanKind, string>> = {
  wait: "#cbd5e1",
  hold: "#16a34a",
  frozen: "#f59e0b",
  stale: "#dc2626",
  dead: "#475569",
};

export function drawTimeline(canvas: HTMLCanvasElement, workers: readonly Worker[], now: number): void {
  const scale = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = workers.length * ROW_PX + 16;
  canvas.style.height = `${height}px`;
  if (canvas.width !== Math.round(width * scale) || canvas.height !== Math.round(height * scale)) {
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
  }
  const context = canvas.getContext("2d");
  if (!context) return;
  context.setTransform(scale, 0, 0, scale, 0, 0);
  context.clearRect(0, 0, width, height);
  const from = now - WINDOW_MS;
  const x = (t: number) => LABEL_PX + ((Math.max(t, from) - from) / WINDOW_MS) * (width - LABEL_PX);
  context.font = "12px ui-monospace, monospace";
  context.textBaseline = "middle";
  workers.forEach((worker, row) => {
    const top = row * ROW_PX;
    context.fillStyle = "#0f172a";
    context.fillText(worker.name, 4, top + ROW_PX / 2);
    // Spans that ended before the window will never be drawn again.
    while ((worker.spans[0]?.to ?? now) < from) worker.spans.shift();
    for (const span of worker.spans) {
      context.fillStyle = SPAN_COLORS[span.kind];
      const left = x(span.from);
      context.fillRect(left, top + 3, Math.max(1, x(span.to ?? now) - left), ROW_PX - 6);
    }
  });
  context.fillStyle = "#64748b";
  const axis = workers.length * ROW_PX + 8;
  for (let s = 0; s <= WINDOW_MS / 1000; s += 2) {
    const label = s === 0 ? "now" : `-${s}s`;
    context.fillText(label, Math.min(width - 28, x(now - s * 1000)) - (s === 0 ? 24 : 8), axis);
  }
}
