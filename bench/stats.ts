/** Summary of a sample of durations or counts. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** The q-quantile (0..1) of an ascending array, interpolating between neighbours; NaN when empty. */
export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower] as number;
  const high = sorted[upper] as number;
  return low + (high - low) * (position - lower);
}

/** The middle half of a sample: [25th percentile, 75th percentile]. */
export function interquartile(values: readonly number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  return [quantileOfSorted(sorted, 0.25), quantileOfSorted(sorted, 0.75)];
}

export function median(values: readonly number[]): number {
  return quantileOfSorted(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    p50: quantileOfSorted(sorted, 0.5),
    p99: quantileOfSorted(sorted, 0.99),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Rounds for JSON output, so results stay readable. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
