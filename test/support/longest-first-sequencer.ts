// The order vitest starts test files in: project by project (system, then conformance, then unit),
// the longest first within each, so that on two workers the run does not end with one long
// devnet file running alone (docs/testing.md, "How `npm test` is scheduled"). vitest's own order,
// without a cache of earlier runs (a fresh clone, CI), runs the largest files first — the longest
// file started last.
//
// Why by project: a worker runs the files of one project only; a file of another project needs a
// new fork, which imports vitest, client-node and our sources again (about a second of CPU). Sorted
// by length alone, the projects interleaved and the whole suite started 53 forks (~1 CPU s each,
// 2026-12-02); grouped, each worker changes project at most twice. The short unit files come last,
// where they even out the two workers' ends.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { FILE_SECONDS } from './file-seconds.ts';

/** Where a project's files go: system first, unit last; any other project between them. */
function projectRank(spec: TestSpecification): number {
  const name = spec.project.name;
  return name === 'system' ? 0 : name === 'unit' ? 2 : 1;
}

/** What a system or conformance file not in FILE_SECONDS is taken to last. */
const UNKNOWN_SYSTEM_SECONDS = 10;

export class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = new Map(files.map((spec) => [spec, this.#estimate(spec)]));
    return Promise.resolve(
      [...files].sort(
        (a, b) => projectRank(a) - projectRank(b) || (seconds.get(b) ?? 0) - (seconds.get(a) ?? 0),
      ),
    );
  }

  /** This machine's last duration of the file when vitest has one, else the committed table. */
  #estimate(spec: TestSpecification): number {
    const cached = this.ctx.cache.getTestSpecificationResult(spec);
    if (cached !== undefined && cached.duration > 0) return cached.duration / 1000;
    const file = relative(this.ctx.config.root, spec.moduleId);
    return FILE_SECONDS[file] ?? (spec.project.name === 'unit' ? 0 : UNKNOWN_SYSTEM_SECONDS);
  }
}
