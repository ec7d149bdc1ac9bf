// Shapes and helpers shared by the benchmark files (bench/*.bench.ts) and their runner.

/**
 * One measured figure. `ratio` is the cost relative to `floor`, measured in the same run on the
 * same machine: for durations value / floor, for throughputs floor / value — so 1 means "as
 * cheap as the floor" and 2 means "twice the floor's cost".
 */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  floor?: { name: string; value: number };
  ratio?: number;
  notes?: string;
}

/** Operations per second of `fn`, after a warm-up, over about `durationMs`. */
export function opsPerSecond(fn: () => void, durationMs = 1_000): number {
  const warmUntil = performance.now() + durationMs / 5;
  while (performance.now() < warmUntil) fn();
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < durationMs) {
    for (let i = 0; i < 16; i++) fn();
    count += 16;
    now = performance.now();
  }
  return (count * 1_000) / (now - start);
}

/** A throughput result against a throughput floor (ratio = floor / value). */
export function throughput(
  name: string,
  value: number,
  floor: { name: string; value: number },
  notes?: string,
): BenchResult {
  return {
    name,
    value: round(value),
    unit: 'ops/s',
    floor: { name: floor.name, value: round(floor.value) },
    ratio: round(floor.value / value, 3),
    ...(notes ? { notes } : {}),
  };
}

/** A duration result against a duration floor (ratio = value / floor). */
export function duration(
  name: string,
  valueMs: number,
  floor: { name: string; value: number },
  notes?: string,
): BenchResult {
  return {
    name,
    value: round(valueMs),
    unit: 'ms',
    floor: { name: floor.name, value: round(floor.value) },
    ratio: round(valueMs / floor.value, 3),
    ...(notes ? { notes } : {}),
  };
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Percentile (0-100) of a list of numbers. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Prints results as JSON when a bench file is run alone. */
export async function runAlone(run: () => Promise<BenchResult[]>, meta: ImportMeta): Promise<void> {
  if (process.argv[1] !== undefined && new URL(meta.url).pathname === process.argv[1]) {
    process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
  }
}
