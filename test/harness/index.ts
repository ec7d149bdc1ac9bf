// The consensus test harness, for this repo's tests and for users' own suites.
export { Harness, type HarnessOptions, type ScaleAnswer, type ScaleOptions } from './harness.ts';
export { waitFor, WaitTimeout, type Probe, type WaitOptions } from './wait.ts';
