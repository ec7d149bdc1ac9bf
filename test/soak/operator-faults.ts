// The soak's operator moves on leadership and pauses (issue 30, items 4–6), beside its key moves
// (key-faults.ts): the Lease deleted under the leader, a second manager under leader election for
// a step (the Lease deleted while both run), and a pause during which the step's own `kubectl
// scale` happens (then a resume). The soak's manager runs with leader election on for these
// (LEADER_ENV); what they may not do is read on the chain by the soak's invariants: no halt, no
// fork, each join one stake and each leave one unstake (no transaction twice), no failed one.
// The rigs are the system tests' (test/integration/leader-election.test.ts: `startReplica`, the
// Lease deleted by CoordinationV1Api; the pause tests: POST /v1/pause and /v1/resume).
import { join } from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { Harness } from '../../src/harness/index.ts';

/**
 * Leader election for the soak's manager: one Lease, timings loose enough for a 2-core machine
 * shared with other runs (a renew that misses its deadline makes the leader step down, which is
 * safe but stalls the step), tight enough that a takeover fits in a step's convergence.
 */
export const LEADER_ENV: Record<string, string> = {
  CM_LEADER_ELECTION: 'true',
  CM_LEASE_NAME: 'cluster-manager',
  CM_IDENTITY: 'manager-a',
  CM_LEASE_DURATION: '6s',
  CM_RENEW_DEADLINE: '4s',
  CM_RETRY_PERIOD: '1s',
};

/** What an operator fault needs of the soak step. */
export interface OperatorFaultContext {
  /** The step's own scale (the fault decides when it happens). */
  scale(): Promise<void>;
  /** Where a second manager writes its journal and log. */
  dir: string;
}

type OperatorFault = (h: Harness, context: OperatorFaultContext) => Promise<void>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Deletes the managers' Lease `times` times, `everyMs` apart (absent: nothing to delete). */
async function deleteLease(h: Harness, times: number, everyMs: number): Promise<number> {
  const coordination = h.kubeConfig.makeApiClient(CoordinationV1Api);
  let deleted = 0;
  for (let i = 0; i < times; i++) {
    await coordination
      .deleteNamespacedLease({ name: 'cluster-manager', namespace: h.info.namespace })
      .then(() => deleted++)
      .catch(() => undefined);
    await sleep(everyMs);
  }
  return deleted;
}

/** Second managers started so far (each its own identity, journal and log). */
let replicas = 0;

/** Fault kinds whose fault makes the step's scale itself (context.scale), at its own moment. */
export const SCALES_ITSELF: ReadonlySet<string> = new Set([
  'Lease deleted',
  'two managers',
  'pause + kubectl scale + resume',
]);

/** Fault kinds whose step scales by kubectl (the operator's move names it). */
export const BY_KUBECTL: ReadonlySet<string> = new Set(['pause + kubectl scale + resume']);

export const OPERATOR_FAULTS: Record<string, OperatorFault> = {
  'Lease deleted': async (h, context) => {
    // While the leader acts on the step's scale, its Lease goes (five times in ~2.5 s): it must
    // step down or win it again, never lead beside another's term.
    await context.scale();
    await deleteLease(h, 5, 500);
  },
  'two managers': async (h, context) => {
    // A second manager (its own journal, as a second pod would have) runs through the step; the
    // Lease is deleted under both while the step's scale is acted on; then the second one stops
    // (SIGTERM), and the first leads again once the Lease is free.
    const n = ++replicas;
    const replica = await h.startReplica(
      {
        CM_RPC_PORT: '0',
        CM_IDENTITY: `manager-b${n}`,
        CM_JOURNAL_PATH: join(context.dir, `journal-b${n}.sqlite`),
      },
      `manager-b${n}`,
    );
    try {
      await sleep(2_000);
      await context.scale();
      await deleteLease(h, 5, 500);
      await sleep(5_000);
    } finally {
      await replica.stop('SIGTERM');
    }
  },
  'pause + kubectl scale + resume': async (h, context) => {
    // The operator pauses, scales (a scale-down lets pods go: their rows must not be left
    // staked with their signers gone), waits, and resumes: the step then converges.
    // Only the leader answers a pause (a follower: 503 NOT_LEADER): tried while leadership
    // settles after an earlier step's takeover.
    for (let attempt = 1; ; attempt++) {
      const paused = await h.post('/v1/pause', {});
      if (paused.status === 200) break;
      if (attempt >= 20) throw new Error(`pause answered ${paused.status}`);
      await sleep(1_000);
    }
    try {
      await context.scale();
      await sleep(5_000);
    } finally {
      await h.post('/v1/resume', {});
    }
  },
};
