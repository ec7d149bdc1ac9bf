// Tests that need kubectl: `it.skipIf(noKubectl)(…)` / `describe.skipIf(noKubectl)(…)`. On a machine
// without a kubectl of 1.27 or newer they are reported as skipped, and the reason is printed once.
import { findKubectl, kubectlMissing } from '../../src/harness/kubectl.ts';

export const kubectl = findKubectl();
export const noKubectl = kubectl === undefined;
if (noKubectl) console.warn(`kubectl tests skipped: ${kubectlMissing()}`);
