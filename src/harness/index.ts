// The consensus test harness, for this repo's tests and for users' own suites
// (`import { Harness, waitFor } from 'cluster-manager/harness'`).
export {
  Harness,
  type ActionRow,
  type HarnessOptions,
  type ManagerReplica,
  type ScaleAnswer,
  type ScaleOptions,
  type ValidatorRow,
} from './harness.ts';
export { ChainLedger, type LedgerTx, type TxType } from './ledger.ts';
export { findKeys, keyNeedles, scanFilesForKeys, type KeyLeak, type Needle } from './key-leaks.ts';
export { findKubectl, runKubectl, type KubectlResult } from './kubectl.ts';
export { CommandLineSampler, commandLine, descendants, isAlive } from './processes.ts';
export { prng } from './random.ts';
export { pending, Pending, waitFor, WaitTimeout, type Probe, type WaitOptions } from './wait.ts';
