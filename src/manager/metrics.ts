// Prometheus metrics of the manager (prom-client, one registry per manager so tests can run
// several in one process). Served at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly validators = new Gauge({
    name: 'cluster_manager_validators',
    help: 'Validators by view: desired (wanted by the cluster), staked (on chain), active (signing).',
    labelNames: ['view'] as const,
    registers: [this.registry],
  });
  readonly phases = new Gauge({
    name: 'cluster_manager_validator_phase',
    help: 'Validators per phase.',
    labelNames: ['phase'] as const,
    registers: [this.registry],
  });
  readonly actions = new Counter({
    name: 'cluster_manager_actions_total',
    help: 'Actions by kind and result (sent, committed, failed, dropped).',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'cluster_manager_reconcile_duration_seconds',
    help: 'Duration of one reconcile.',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'cluster_manager_reconcile_errors_total',
    help: 'Reconciles that failed and were retried with backoff.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'cluster_manager_queue_depth',
    help: 'Validators waiting in the work queue.',
    registers: [this.registry],
  });
  readonly lastSync = new Gauge({
    name: 'cluster_manager_last_successful_sync_timestamp_seconds',
    help: 'When the chain last answered (Unix time).',
    registers: [this.registry],
  });
  readonly chainHeight = new Gauge({
    name: 'cluster_manager_chain_height',
    help: 'Last committed height seen.',
    registers: [this.registry],
  });
  readonly informerRestarts = new Counter({
    name: 'cluster_manager_informer_restarts_total',
    help: 'Informer restarts after errors.',
    labelNames: ['informer'] as const,
    registers: [this.registry],
  });
  readonly keyProblems = new Gauge({
    name: 'cluster_manager_key_problems',
    help: 'Entries of the keys Secret with a problem: malformed, or the same key under several ids.',
    registers: [this.registry],
  });
  readonly discoveryProblems = new Gauge({
    name: 'cluster_manager_discovery_file_problems',
    help: 'Static discovery: 1 while a file (validators-file, keys-file) is not usable and its last good version stays in force, else 0.',
    labelNames: ['file'] as const,
    registers: [this.registry],
  });
  readonly chainTrusted = new Gauge({
    name: 'cluster_manager_chain_trusted',
    help: '0 while the chain is not trusted (its height went back, or a seen block differs): no action is taken; else 1.',
    registers: [this.registry],
  });
  readonly chainDistrusts = new Counter({
    name: 'cluster_manager_chain_untrusted_total',
    help: 'Times the chain stopped being trusted.',
    registers: [this.registry],
  });
  readonly minimumSet = new Gauge({
    name: 'cluster_manager_minimum_set',
    help: 'The minimum validator set in force (−1 while not known).',
    registers: [this.registry],
  });
  readonly cannotVote = new Gauge({
    name: 'cluster_manager_validators_cannot_vote',
    help: 'Validators that cannot vote on a chain without state sync (NO_STATE_SYNC): staked (counted in the quorum, silent) or refused (not staked, since it would halt the chain).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly staleKeyPods = new Counter({
    name: 'cluster_manager_stale_key_pods_total',
    help: 'Validator pods whose node started before their key was seen (it may hold an older key), by what was done: restarted (deleted, for their StatefulSet to start them again), or reported (CM_RESTART_STALE_PODS=false). Once per pod uid.',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  readonly hookRuns = new Counter({
    name: 'cluster_manager_hook_runs_total',
    help: 'Hook runs by phase (pre-stake, post-stake, pre-unstake, post-unstake, readiness), hook name and result (succeeded, failed, cancelled).',
    labelNames: ['phase', 'hook', 'result'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'cluster_manager_leader',
    help: '1 when this replica leads (or election is off), else 0.',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics === true) collectDefaultMetrics({ register: this.registry });
  }
}
