// The wiring of the readers: the scaler and the control plane get the manager's read model and
// narrow ports for what they do (pause, re-queue, drive the chain's views, scale the workload),
// built here from a manager's parts — so no reader imports the Manager class (lint keeps it so).
import { blockClockOf } from './chain/block-clock.ts';
import { kubernetesReplicas } from './discovery/kubernetes-replicas.ts';
import type { Manager } from './manager.ts';
import type { ManagerControl, ViewDriver } from './read-model.ts';
import { ManagerControlPlane, type ControlPlanePorts } from './rpc/control-plane.ts';
import { noReplicaTarget, type ReplicaTarget } from './scale/replica-target.ts';
import { Scaler, type ScalerPorts } from './scale/scaler.ts';

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
  };
}

/** The Kubernetes discovery's StatefulSet and pods; a refusal for a discovery without them. */
export function replicaTargetOf(manager: Manager): ReplicaTarget {
  if (manager.kubernetes !== undefined) return kubernetesReplicas(manager.kubernetes);
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
