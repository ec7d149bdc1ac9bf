// A scale-down drain is recorded on the StatefulSet (cluster-manager.dev/scale-target) as well as
// on the leaving pods. A leaving pod that is missing when the drain starts, or that is recreated
// by the StatefulSet controller without its draining annotation, must still count as leaving.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { computeDesiredState, DiscoveryMemory } from '../../src/manager/discovery/desired-state.ts';
import { createIdMapper } from '../../src/manager/discovery/id-mapping.ts';
import { compileLabelSelector } from '../../src/manager/kube/label-selector.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';

const LABELS = { 'pokt.network/purpose': 'validator' };

function statefulSet(replicas: number, scaleTarget?: number): V1StatefulSet {
  return {
    metadata: {
      name: 'validator',
      namespace: 'default',
      uid: 'uid-validator',
      ...(scaleTarget === undefined
        ? {}
        : { annotations: { 'cluster-manager.dev/scale-target': String(scaleTarget) } }),
    },
    spec: {
      replicas,
      serviceName: 'validators',
      selector: { matchLabels: LABELS },
      template: { metadata: { labels: LABELS } },
    },
  };
}

function pod(ordinal: number, annotations: Record<string, string> = {}): V1Pod {
  return {
    metadata: {
      name: `validator-${ordinal}`,
      namespace: 'default',
      uid: `uid-${ordinal}-${Object.keys(annotations).length}`,
      labels: LABELS,
      annotations,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'validator',
          uid: 'uid-validator',
          controller: true,
        },
      ],
    },
    spec: { containers: [{ name: 'node', ports: [{ name: 'p2p', containerPort: 42069 }] }] },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

function wanted(sets: V1StatefulSet[], pods: V1Pod[]): Record<string, boolean> {
  const state = computeDesiredState(
    {
      namespace: 'default',
      statefulSets: sets,
      pods,
      isValidatorTemplate: compileLabelSelector('pokt.network/purpose=validator'),
      mapper: createIdMapper(
        {
          idMapping: 'ordinal',
          idPattern: /^validator-(\d+)-pocket/,
          idAnnotation: 'cluster-manager.dev/validator-id',
        },
        pocketIds,
      ),
      serviceUrlTemplate: '{pod}:{port:p2p}',
      nodeRpcPortName: 'rpc',
      now: 1_000,
    },
    new DiscoveryMemory(),
  );
  return Object.fromEntries([...state.validators].map(([id, v]) => [id, v.wanted]));
}

describe('a drain recorded on the StatefulSet', () => {
  it('leaves ordinals at or above the scale-down target unwanted, annotated or not', () => {
    const draining = { 'cluster-manager.dev/draining': 'true' };
    // 3 → 1: validator-1 was recreated without the annotation, validator-2 is gone for now.
    expect(wanted([statefulSet(3, 1)], [pod(0), pod(1)])).toEqual({
      '001': true,
      '002': false,
      '003': false,
    });
    expect(wanted([statefulSet(3, 1)], [pod(0), pod(1, draining), pod(2, draining)])).toEqual({
      '001': true,
      '002': false,
      '003': false,
    });
  });

  it('changes nothing without a target, or with a target at or above the replicas', () => {
    expect(wanted([statefulSet(3)], [pod(0), pod(1), pod(2)])).toEqual({
      '001': true,
      '002': true,
      '003': true,
    });
    expect(wanted([statefulSet(3, 5)], [pod(0), pod(1), pod(2)])).toEqual({
      '001': true,
      '002': true,
      '003': true,
    });
  });
});
