// The Kubernetes side of leader election: an elector on the Lease CM_LEASE_NAME (leader-election.ts)
// in the manager's terms (parts/leader-election.ts's ElectorFactory). The pause the leader keeps
// on the Lease reaches the manager as a boolean, never as the Lease.
import type { Config } from '../config.ts';
import type { ElectorFactory } from '../parts/leader-election.ts';
import type { KubeClients } from './client.ts';
import { LeaderElector } from './leader-election.ts';
import { pausedOn } from './lease-pause-record.ts';

/** Elects on the Lease `config.leaseName` in the cluster's namespace when config asks for it. */
export function leaseElection(kube: KubeClients, config: Config): ElectorFactory | undefined {
  if (!config.leaderElection) return undefined;
  return (callbacks, { clock, logger }) =>
    new LeaderElector({
      coordination: kube.coordination,
      namespace: kube.namespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
      clock,
      logger: logger.child({ component: 'leader-election' }),
      onStartedLeading: () => callbacks.onStartedLeading(),
      onStoppedLeading: () => callbacks.onStoppedLeading(),
      onLeaseRead: (lease, startedAt) => callbacks.onPauseRead(pausedOn(lease), startedAt),
      annotations: () => callbacks.annotations(),
    });
}
