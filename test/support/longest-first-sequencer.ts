// The order vitest starts test files in: the longest first, whatever their project, so that on
// two workers the run does not end with one long devnet file running alone (docs/testing.md,
// "Timings"). vitest's own order runs the projects one after the other and, without a cache of
// earlier runs (a fresh clone, CI), the largest files first — the longest file started last.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { FILE_SECONDS } from './file-seconds.ts';

/** What a system or conformance file not in FILE_SECONDS is taken to last. */
const UNKNOWN_SYSTEM_SECONDS = 10;

export class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = new Map(files.map((spec) => [spec, this.#estimate(spec)]));
    return Promise.resolve(
      [...files].sort((a, b) => (seconds.get(b) ?? 0) - (seconds.get(a) ?? 0)),
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
