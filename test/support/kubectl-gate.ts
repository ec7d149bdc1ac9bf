// Tests that need kubectl: `it.skipIf(noKubectl)(…)` / `describe.skipIf(noKubectl)(…)`. On a machine
// without a kubectl of 1.27 or newer they are reported as skipped, and the reason is printed once.
// Tests run once per kubectl version use `eachKubectl(binaries, why)`: with no binary, one test is
// reported as skipped (an empty `it.each` would register none, and vitest fails an empty suite).
import { it } from 'vitest';
import { findKubectl, kubectlMissing, type KubectlBinary } from '../../src/harness/kubectl.ts';

export const kubectl = findKubectl();
export const noKubectl = kubectl === undefined;
if (noKubectl) console.warn(`kubectl tests skipped: ${kubectlMissing()}`);

/** Stands for "no kubectl" in the name of the one skipped test (`kubectl none: …`). */
const NONE: KubectlBinary = { path: '', version: 'none', minor: 0, source: 'PATH' };

/** `it.each(binaries)`, or one skipped test (with `why` printed) when there is none. */
export function eachKubectl(binaries: readonly KubectlBinary[], why: string) {
  if (binaries.length > 0) return it.each([...binaries]);
  console.warn(`kubectl tests skipped: ${why}`);
  return it.skip.each([NONE]);
}

/** `it.for(binaries)` (one context argument), or one skipped test when there is none. */
export function forKubectl(binaries: readonly KubectlBinary[], why: string) {
  if (binaries.length > 0) return it.for([...binaries]);
  console.warn(`kubectl tests skipped: ${why}`);
  return it.skip.for([NONE]);
}

/**
 * What `build` makes with kubectl (a `kubectl kustomize` output, say) when a suite is collected:
 * with no kubectl, a stand-in that throws on any use, so a test that uses it without
 * `skipIf(noKubectl)` fails with the reason instead of passing on nothing.
 */
export function withKubectl<T extends object>(build: () => T): T {
  if (!noKubectl) return build();
  return new Proxy({} as T, {
    get() {
      throw new Error(`kubectl is needed here and there is none: ${kubectlMissing()}`);
    },
  });
}
