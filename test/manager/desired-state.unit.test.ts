// Wanted-ness comes from the StatefulSet's spec; pods only add readiness, holds and drains.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { computeDesiredState, DiscoveryMemory } from '../../src/manager/discovery/desired-state.ts';
import { createIdMapper } from '../../src/manager/discovery/id-mapping.ts';
import { compileLabelSelector } from '../../src/manager/kube/label-selector.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';

const LABELS = { 'pokt.network/purpose': 'validator' };

function sts(
  name: string,
  replicas: number,
  extra: Partial<V1StatefulSet['metadata']> = {},
): V1StatefulSet {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...extra },
    spec: {
      replicas,
      serviceName: 'validators',
      selector: { matchLabels: LABELS },
      template: { metadata: { labels: LABELS } },
    },
  };
}

function pod(
  name: string,
  owner: string | undefined,
  fields: { ready?: boolean; annotations?: Record<string, string>; ip?: string } = {},
): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: LABELS,
      ...(fields.annotations ? { annotations: fields.annotations } : {}),
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'StatefulSet',
                name: owner,
                uid: `uid-${owner}`,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers: [
        {
          name: 'node',
          ports: [
            { name: 'rpc', containerPort: 50832 },
            { name: 'p2p', containerPort: 42069 },
          ],
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: fields.ip ?? '10.0.0.1',
      conditions: [{ type: 'Ready', status: fields.ready === false ? 'False' : 'True' }],
    },
  };
}

function compute(
  statefulSets: V1StatefulSet[],
  pods: V1Pod[],
  mapping: 'ordinal' | 'pattern' | 'annotation' = 'ordinal',
  memory = new DiscoveryMemory(),
) {
  return computeDesiredState(
    {
      namespace: 'default',
      statefulSets,
      pods,
      isValidatorTemplate: compileLabelSelector('pokt.network/purpose=validator'),
      mapper: createIdMapper(
        {
          idMapping: mapping,
          idPattern: /^validator-(\d+)-pocket/,
          idAnnotation: 'cluster-manager.dev/validator-id',
        },
        pocketIds,
      ),
      serviceUrlTemplate: '{pod}.{service}.{namespace}.svc.cluster.local:{port:p2p}',
      nodeRpcPortName: 'rpc',
      now: 1_000,
    },
    memory,
  );
}

describe('computeDesiredState', () => {
  it('wants ordinal + 1 ids below replicas, even when a pod is missing or not Ready', () => {
    const state = compute(
      [sts('validator', 3)],
      [pod('validator-0', 'validator'), pod('validator-2', 'validator', { ready: false })],
    );
    expect([...state.validators.keys()]).toEqual(['001', '002', '003']);
    expect([...state.validators.values()].every((v) => v.wanted)).toBe(true);
    expect(state.validators.get('002')?.pod).toBeUndefined();
    expect(state.validators.get('003')?.pod).toMatchObject({ ready: false, readySince: undefined });
    expect(state.validators.get('001')?.pod).toMatchObject({
      ready: true,
      readySince: 1_000,
      nodeRpcUrl: 'http://10.0.0.1:50832',
      serviceUrl: 'validator-0.validators.default.svc.cluster.local:42069',
    });
  });

  it('marks a pod flapped once it lost readiness (same uid) or a container restarted, not before', () => {
    const memory = new DiscoveryMemory();
    const sets = [sts('validator', 2)];
    const flapped = (pods: V1Pod[]) => {
      const state = compute(sets, pods, 'ordinal', memory);
      return ['001', '002'].map((id) => state.validators.get(id)?.pod?.flapped);
    };
    const restarted = pod('validator-1', 'validator');
    restarted.status = {
      ...restarted.status,
      containerStatuses: [{ name: 'node', image: 'x', imageID: '', ready: true, restartCount: 1 }],
    };
    // First Ready spell: no debounce. The restarted container flaps from the start.
    expect(flapped([pod('validator-0', 'validator'), restarted])).toEqual([false, true]);
    // Unready, then Ready again: flapped, and stays so while the uid lives.
    expect(flapped([pod('validator-0', 'validator', { ready: false }), restarted])).toEqual([
      true,
      true,
    ]);
    expect(flapped([pod('validator-0', 'validator'), restarted])).toEqual([true, true]);
    // A new pod (new uid) of the same ordinal starts afresh; the old uid is forgotten.
    const recreated = pod('validator-0', 'validator');
    recreated.metadata = { ...recreated.metadata, uid: 'uid-validator-0-b' };
    expect(flapped([recreated, restarted])).toEqual([false, true]);
    expect(memory.lostReady.has('uid-validator-0')).toBe(false);
  });

  it('does not want pods at or above replicas, pods of a deleted StatefulSet, or draining pods', () => {
    const state = compute(
      [sts('validator', 2)],
      [
        pod('validator-0', 'validator'),
        pod('validator-1', 'validator', {
          annotations: { 'cluster-manager.dev/draining': 'true' },
        }),
        pod('validator-2', 'validator'),
        pod('orphan-0', 'gone'),
      ],
      'ordinal',
    );
    expect(state.validators.get('001')?.wanted).toBe(true);
    expect(state.validators.get('002')).toMatchObject({
      wanted: false,
      wantedReason: expect.stringContaining('draining'),
    });
    expect(state.validators.get('003')).toMatchObject({
      wanted: false,
      wantedReason: expect.stringContaining('not below replicas 2'),
    });
  });

  it('maps Pocket-style names with a pattern: one StatefulSet per validator', () => {
    const state = compute(
      [sts('validator-005-pocket', 1), sts('validator-006-pocket', 0)],
      [
        pod('validator-005-pocket-0', 'validator-005-pocket'),
        pod('validator-006-pocket-0', 'validator-006-pocket'),
        pod('validator-007-pocket-0', undefined),
      ],
      'pattern',
    );
    expect(state.validators.get('005')?.wanted).toBe(true);
    expect(state.validators.get('006')?.wanted).toBe(false);
    expect(state.validators.get('007')).toMatchObject({
      wanted: false,
      wantedReason: expect.stringContaining('no controlling StatefulSet'),
    });
  });

  it("uses the process kubelet's published host ports for the node RPC and service URL", () => {
    const p = pod('validator-0', 'validator', {
      ip: '127.0.0.1',
      annotations: { 'kube-emulator.dev/host-ports': '{"rpc":53001,"p2p":53002}' },
    });
    const state = compute([sts('validator', 1)], [p]);
    expect(state.validators.get('001')?.pod).toMatchObject({
      nodeRpcUrl: 'http://127.0.0.1:53001',
      serviceUrl: 'validator-0.validators.default.svc.cluster.local:53002',
    });
  });

  it('annotation mapping: remembers ids of pods that vanish and flags wanted pods whose id is unknown', () => {
    const memory = new DiscoveryMemory();
    const annotated = pod('validator-0', 'validator', {
      annotations: { 'cluster-manager.dev/validator-id': '42' },
    });
    expect(compute([sts('validator', 2)], [annotated], 'annotation', memory)).toMatchObject({
      unresolvedWanted: ['validator-1'],
    });
    const later = compute([sts('validator', 2)], [], 'annotation', memory);
    expect(later.validators.get('042')?.wanted).toBe(true);
    expect(later.unresolvedWanted).toEqual(
      ['validator-0', 'validator-1'].filter((n) => n !== 'validator-0'),
    );
  });

  it('flags two pods claiming one id as a conflict', () => {
    const a = pod('validator-0', 'validator', {
      annotations: { 'cluster-manager.dev/validator-id': '7' },
    });
    const b = pod('validator-1', 'validator', {
      annotations: { 'cluster-manager.dev/validator-id': '7' },
    });
    const state = compute([sts('validator', 2)], [a, b], 'annotation');
    expect(state.validators.get('007')?.conflict).toMatch(/claimed by validator-0 and validator-1/);
  });

  it('ignores StatefulSets whose pods are not validators', () => {
    const other = sts('postgres', 3);
    other.spec = { ...other.spec!, template: { metadata: { labels: { app: 'db' } } } };
    expect(compute([other], []).validators.size).toBe(0);
  });
});
