// Loaded into a manager with `--import` (BENCH_MANAGER_NODE_OPTIONS="--import
// $PWD/bench/support/heap-stats.ts"): on SIGUSR2 the process appends one JSON line to
// <os tmpdir>/heap-stats-<pid>.jsonl — its RSS, V8's heap (reserved and used, per space), external
// memory and V8's own malloc peak — for docs/benchmarks.md's memory breakdown. Nothing else.
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

process.on('SIGUSR2', () => {
  const memory = process.memoryUsage();
  const heap = v8.getHeapStatistics();
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .filter((space) => space.space_size > 0)
      .map((space) => [
        space.space_name,
        { reserved: mib(space.space_size), used: mib(space.space_used_size) },
      ]),
  );
  const line = {
    rss: mib(memory.rss),
    heapTotal: mib(memory.heapTotal),
    heapUsed: mib(memory.heapUsed),
    external: mib(memory.external),
    mallocPeak: mib(heap.peak_malloced_memory),
    spaces,
  };
  appendFileSync(join(tmpdir(), `heap-stats-${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
});
