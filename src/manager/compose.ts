// The composition root. `composeManager` builds a manager's collaborators from the configuration
// (the chain port, the discovery source, the hooks) and hands them to `Manager`, which holds no
// chain or cluster logic of its own. The readers (the scaler and the control plane) get the
// manager's read model and narrow ports for what they do (pause, re-queue, drive the chain's
// views, scale the workload), built here too — so no reader imports the Manager class (lint keeps
// it so).
import { blockClockOf } from './chain/block-clock.ts';
import type { ChainPort } from './chain/port.ts';
import { chainNamed } from './chain/registry.ts';
import type { Config } from './config.ts';
import { kubernetesReplicas } from './discovery/kubernetes-replicas.ts';
import { KubernetesDiscovery } from './discovery/kubernetes-source.ts';
import type { DiscoveryDeps, DiscoverySource } from './discovery/port.ts';
import { ManagerError } from './errors.ts';
import { loadHooksFile, type HookDefinition } from './hooks/hooks-file.ts';
import type { KubeClients } from './kube/client.ts';
import { leaseElection } from './kube/lease-election.ts';
import { Manager, type ManagerOptions, type ManagerParts } from './manager.ts';
import type { ElectorFactory } from './parts/leader-election.ts';
import { participationSource, type ParticipationSource } from './participation/participation.ts';
import type { ManagerControl, ViewDriver } from './read-model.ts';
import { ManagerControlPlane, type ControlPlanePorts } from './rpc/control-plane.ts';
import type { Runnable } from './runnable.ts';
import { noReplicaTarget, type ReplicaTarget } from './scale/replica-target.ts';
import { Scaler, type ScalerPorts } from './scale/scaler.ts';

/** What `composeManager` takes: a manager's options, each collaborator optional (defaults below). */
export type ComposeOptions = Omit<
  ManagerOptions,
  'chain' | 'discovery' | 'election' | 'hooks' | 'order'
> & {
  /** The chain (default: the one config.chain names, at config.chainRpcUrl, with its settings). */
  chain?: ChainPort;
  /** The cluster, for the default (Kubernetes) discovery; not needed with `discovery`. */
  kube?: KubeClients;
  /** Builds the discovery source (default: Kubernetes, from `kube`). */
  discovery?: (deps: DiscoveryDeps) => DiscoverySource;
  /** The hooks (default: read from config.hooksFile, which throws HooksFileError when invalid). */
  hooks?: readonly HookDefinition[];
  /** The elector (default: on the Lease in `kube`, when config.leaderElection; none without kube). */
  election?: ElectorFactory | undefined;
};

/** A manager with the default collaborators for whatever `options` leaves out. */
export function composeManager(options: ComposeOptions): Manager {
  return new Manager(composedOptions(options));
}

/** What `composeManager` builds its manager from (tests wrap the parts' order to watch it). */
export function composedOptions(options: ComposeOptions): ManagerOptions {
  const { config, kube, chain, discovery, election, hooks, ...rest } = options;
  return {
    ...rest,
    config,
    chain: chain ?? chainPortOf(config),
    discovery:
      discovery ??
      ((deps) => {
        if (kube === undefined)
          throw new ManagerError(
            'CONFIG_INVALID',
            'a manager needs `kube` or a `discovery` source',
          );
        return new KubernetesDiscovery({ ...deps, config, kube });
      }),
    election: election ?? (kube === undefined ? undefined : leaseElection(kube, config)),
    hooks: hooks ?? (config.hooksFile === undefined ? [] : loadHooksFile(config.hooksFile)),
    order: managerStartOrder,
  };
}

/**
 * The order a manager's parts start in; they stop in reverse (runnable.ts). The journal first
 * (every part reads it) and closed last; leftover keybases removed before anything can send; the
 * chain view polls while discovery waits for its caches; the election before the loop, so the
 * loop stops first: in-flight work finishes under the lease, then the lease is released.
 */
export function managerStartOrder(parts: ManagerParts): Runnable[] {
  return [
    parts.journal,
    parts.leftovers,
    parts.chainView,
    parts.discovery,
    parts.election,
    parts.loop,
  ];
}

/** The port of the chain `config.chain` names (chain/registry.ts), with its own settings. */
export function chainPortOf(config: Config): ChainPort {
  const definition = chainNamed(config.chain);
  if (definition === undefined)
    throw new ManagerError('CONFIG_INVALID', `no chain named ${config.chain} is registered`);
  return definition.port(config.chainRpcUrl, config.chainSettings);
}

/** The Kubernetes discovery behind `manager`, if that is its discovery (the scaler's replicas). */
export function kubernetesOf(manager: Manager): KubernetesDiscovery | undefined {
  return manager.discovery instanceof KubernetesDiscovery ? manager.discovery : undefined;
}

/** The read model and the ports a reader of `manager` acts through. */
export function readerPorts(manager: Manager): Omit<ControlPlanePorts, 'scaler'> & ScalerPorts {
  const control: ManagerControl = {
    setPaused: (paused) => manager.setPaused(paused),
    enqueueAll: () => manager.enqueueAll(),
  };
  const reads = manager.chainPort.reads;
  const blocks = blockClockOf(reads);
  const driver: ViewDriver = {
    height: (signal) => reads.height({ signal }),
    triggerView: (signal) => manager.adapter.triggerView(signal),
    poke: () => manager.chain.poke(),
    blockTime: (height) => blocks.timeOf(height),
  };
  return {
    read: manager.readModel(),
    control,
    driver,
    replicas: replicaTargetOf(manager),
    metrics: manager.metrics,
    clock: manager.clock,
    logger: manager.logger,
    chain: {
      name: manager.config.chain,
      ids: manager.chainPort.ids.spec,
      stake: manager.chainPort.stake.shown,
    },
  };
}

/** The Kubernetes discovery's StatefulSet and pods; a refusal for a discovery without them. */
export function replicaTargetOf(manager: Manager): ReplicaTarget {
  const kubernetes = kubernetesOf(manager);
  if (kubernetes !== undefined) return kubernetesReplicas(kubernetes);
  return noReplicaTarget(
    manager.discovery.scaleUnsupported() ?? `discovery is ${manager.discovery.mode}`,
  );
}

/** The control plane of `manager`, with its scaler (or the one given, for tests). */
export function controlPlaneOf(
  manager: Manager,
  scaler?: (ports: ScalerPorts) => Scaler,
): ManagerControlPlane {
  const ports = readerPorts(manager);
  return new ManagerControlPlane({ ...ports, scaler: (scaler ?? ((p) => new Scaler(p)))(ports) });
}

/** The participation read of `manager`: its record, named with its keys, rows for its wanted ids. */
export function participationOf(manager: Manager): ParticipationSource {
  return participationSource({
    record: manager.participation,
    keys: manager.keys,
    desired: () => manager.desired(),
    chain: manager.chain,
  });
}
