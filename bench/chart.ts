import type { ContentionResults, ContentionSummary } from "./contention";
import { FAIRNESS_FLOOR } from "./goals";
import type { VariantId } from "./variants";

/** Colours by variant: ours in blues, greens and teals, peers in warm tones. */
const COLOURS: Partial<Record<VariantId, string>> = {
  "ours-wake": "#1f77b4",
  "ours-fair": "#17becf",
  "ours-poll": "#2ca02c",
  "v021-d100": "#d62728",
  "v021-d10": "#ff7f0e",
  redlock: "#9467bd",
  semaphore: "#8c564b",
  "sem-ours": "#1f77b4",
  "sem-ours-fair": "#17becf",
  "sem-redis-semaphore": "#8c564b",
};

const PANEL = { width: 400, height: 250, left: 62, right: 12, top: 34, bottom: 40 };
const LEGEND_WIDTH = 300;
/** Space above each row's panels for the row's heading. */
const ROW_HEADING = 22;

interface Panel {
  readonly title: string;
  readonly yLabel: string;
  readonly log: boolean;
  readonly pick: (row: ContentionSummary) => number;
  /** A fixed top of the linear scale, instead of one fitted to the values. */
  readonly max?: number;
  /** A dashed horizontal line: a goal. */
  readonly guide?: { readonly value: number; readonly label: string };
}

const PANELS: Panel[] = [
  {
    title: "handover p50 (release called → next acquire)",
    yLabel: "ms (log scale)",
    log: true,
    pick: (row) => row.handoverP50,
  },
  { title: "throughput", yLabel: "critical sections / s", log: false, pick: (row) => row.sectionsPerSecond },
  {
    title: "fairness (least served worker ÷ mean)",
    yLabel: "min ÷ mean sections per worker",
    log: false,
    pick: (row) => row.fairnessRatio,
    max: 1,
    guide: { value: FAIRNESS_FLOOR, label: `goal for fair variants: ≥ ${FAIRNESS_FLOOR}` },
  },
];

/**
 * A hand-written SVG: for each run (locks or semaphores, over one transport) a row of three panels
 * (handover p50, throughput, fairness) against the number of worker processes, one line per variant.
 */
export function contentionChart(runs: ContentionResults[], caption: string): string {
  const rowHeight = ROW_HEADING + PANEL.height + 30;
  const width = PANEL.width * PANELS.length + LEGEND_WIDTH;
  const height = 50 + rowHeight * runs.length + 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">Contention: K workers looping acquire → 5 ms work → release</text>`,
    `<text x="12" y="40" fill="#555">${escapeXml(caption)}</text>`,
  ];
  runs.forEach((run, rowIndex) => {
    const top = 50 + rowIndex * rowHeight;
    parts.push(
      `<text x="12" y="${top + 16}" font-size="14" font-weight="600">${escapeXml(rowName(run))}</text>`,
    );
    const y = top + ROW_HEADING;
    PANELS.forEach((panel, panelIndex) => {
      parts.push(drawPanel(run, panel, panelIndex * PANEL.width, y));
    });
    parts.push(drawLegend(run, PANEL.width * PANELS.length + 8, y + PANEL.top));
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

function rowName(run: ContentionResults): string {
  const transport = run.transport === "http" ? "HTTP (@upstash/redis)" : "TCP (ioredis)";
  return `${transport} · ${run.permits === 1 ? "locks" : `semaphores, limit ${run.permits}`}`;
}

function drawPanel(run: ContentionResults, panel: Panel, x0: number, y0: number): string {
  const plotWidth = PANEL.width - PANEL.left - PANEL.right;
  const plotHeight = PANEL.height - PANEL.top - PANEL.bottom;
  const ks = run.ks;
  const rows = run.summary.filter(
    (row) => Number.isFinite(panel.pick(row)) && (panel.log ? panel.pick(row) > 0 : panel.pick(row) >= 0),
  );
  const values = rows.map(panel.pick);
  const xOf = (k: number) => {
    const index = ks.indexOf(k);
    return x0 + PANEL.left + (ks.length === 1 ? plotWidth / 2 : (index / (ks.length - 1)) * plotWidth);
  };
  const scale = panel.log ? logScale(values) : linearScale(values, panel.max);
  const yOf = (value: number) => y0 + PANEL.top + plotHeight - scale.position(value) * plotHeight;
  const out: string[] = [
    `<text x="${x0 + PANEL.left}" y="${y0 + 20}" font-weight="600">${escapeXml(panel.title)}</text>`,
    `<rect x="${x0 + PANEL.left}" y="${y0 + PANEL.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#ccc"/>`,
  ];
  for (const tick of scale.ticks) {
    const y = yOf(tick);
    out.push(
      `<line x1="${x0 + PANEL.left}" x2="${x0 + PANEL.left + plotWidth}" y1="${y}" y2="${y}" stroke="#eee"/>`,
      `<text x="${x0 + PANEL.left - 6}" y="${y + 4}" text-anchor="end" fill="#555">${formatTick(tick)}</text>`,
    );
  }
  if (panel.guide) {
    const y = yOf(panel.guide.value);
    out.push(
      `<line x1="${x0 + PANEL.left}" x2="${x0 + PANEL.left + plotWidth}" y1="${y}" y2="${y}" stroke="#888" stroke-dasharray="5 4"/>`,
      `<text x="${x0 + PANEL.left + 4}" y="${y + 13}" fill="#666" font-size="11">${escapeXml(panel.guide.label)}</text>`,
    );
  }
  for (const k of ks) {
    out.push(
      `<text x="${xOf(k)}" y="${y0 + PANEL.top + plotHeight + 16}" text-anchor="middle" fill="#555">${k}</text>`,
    );
  }
  out.push(
    `<text x="${x0 + PANEL.left + plotWidth / 2}" y="${y0 + PANEL.height - 6}" text-anchor="middle" fill="#555">workers (K)</text>`,
    `<text transform="translate(${x0 + 14} ${y0 + PANEL.top + plotHeight / 2}) rotate(-90)" text-anchor="middle" fill="#555">${escapeXml(panel.yLabel)}</text>`,
  );
  for (const variant of new Set(rows.map((row) => row.variant))) {
    const line = rows.filter((row) => row.variant === variant).sort((a, b) => a.k - b.k);
    const colour = COLOURS[variant] ?? "#333";
    const points = line.map((row) => `${xOf(row.k).toFixed(1)},${yOf(panel.pick(row)).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.join(" ")}"/>`);
    for (const row of line) {
      out.push(
        `<circle cx="${xOf(row.k).toFixed(1)}" cy="${yOf(panel.pick(row)).toFixed(1)}" r="3" fill="${colour}"><title>${escapeXml(`${row.label}, K=${row.k}: ${panel.pick(row)}`)}</title></circle>`,
      );
    }
  }
  return out.join("\n");
}

function drawLegend(run: ContentionResults, x: number, y: number): string {
  const order = Object.keys(COLOURS);
  const variants = [...new Set(run.summary.map((row) => row.variant))].sort(
    (a, b) => order.indexOf(a) - order.indexOf(b),
  );
  return variants
    .map((variant, index) => {
      const rows = run.summary.filter((row) => row.variant === variant);
      const inactive = rows.some((row) => row.wakeUpsActive === false);
      const label = (rows[0]?.label ?? variant) + (inactive ? " (inactive: polled)" : "");
      const colour = COLOURS[variant] ?? "#333";
      const rowY = y + index * 20;
      return `<line x1="${x}" x2="${x + 18}" y1="${rowY}" y2="${rowY}" stroke="${colour}" stroke-width="3"/><text x="${x + 24}" y="${rowY + 4}">${escapeXml(wrapLabel(label))}</text>`;
    })
    .join("\n");
}

function wrapLabel(label: string): string {
  return label.length > 40 ? `${label.slice(0, 39)}…` : label;
}

interface Scale {
  position(value: number): number;
  ticks: number[];
}

function linearScale(values: number[], fixedMax?: number): Scale {
  const max = fixedMax ?? niceCeiling(Math.max(1, ...values));
  const step = max / 5;
  return {
    position: (value) => value / max,
    ticks: Array.from({ length: 6 }, (_, index) => index * step),
  };
}

function logScale(values: number[]): Scale {
  const low = 10 ** Math.floor(Math.log10(Math.max(0.01, Math.min(...values))));
  const high = 10 ** Math.ceil(Math.log10(Math.max(low * 10, ...values)));
  const span = Math.log10(high) - Math.log10(low);
  const ticks: number[] = [];
  for (let decade = low; decade <= high; decade *= 10) {
    for (const factor of [1, 2, 5]) if (decade * factor <= high) ticks.push(decade * factor);
  }
  return { position: (value) => (Math.log10(value) - Math.log10(low)) / span, ticks };
}

function niceCeiling(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function formatTick(value: number): string {
  if (value >= 1000) return `${value / 1000}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 0.1 ? 2 : 1);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
