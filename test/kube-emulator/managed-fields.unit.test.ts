// Server-side apply and managedFields against the ResourceApi (no HTTP): ownership by apply and
// by update, conflicts with the apiserver's message, force, removal of fields no longer applied,
// shared ownership of equal values, and the scale subresource as its own manager.
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/kube-emulator/clock.ts';
import { kindOf } from '../../src/kube-emulator/kinds.ts';
import { PatchType, ResourceApi } from '../../src/kube-emulator/resource-api.ts';
import { ApiError } from '../../src/kube-emulator/status-errors.ts';
import { Store } from '../../src/kube-emulator/store.ts';
import type { KubeObject } from '../../src/kube-emulator/types.ts';

const clock: Clock = {
  now: () => Date.parse('2026-12-01T09:00:00Z'),
  setTimeout: () => () => undefined,
};
const statefulSets = kindOf('apps', 'statefulsets');
const configMaps = kindOf('', 'configmaps');

function setup(): ResourceApi {
  const api = new ResourceApi({ store: new Store({ historySize: 100, rvBase: 1 }), clock });
  api.create(kindOf('', 'namespaces'), '', { metadata: { name: 'default' } });
  return api;
}

function sts(replicas: number, containers: string[], labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', labels },
    spec: {
      replicas,
      serviceName: 'web',
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: containers.map((name) => ({ name, image: `${name}:1` })) },
      },
    },
  };
}

const apply = (api: ResourceApi, body: KubeObject, manager: string, force = false): KubeObject =>
  api.patch({ info: statefulSets, namespace: 'default', name: 'web' }, JSON.stringify(body), {
    contentType: PatchType.apply,
    fieldManager: manager,
    manager,
    force,
  });

function managers(object: KubeObject): string[] {
  const entries = (object.metadata.managedFields ?? []) as {
    manager: string;
    operation: string;
    subresource?: string;
  }[];
  return entries.map(
    (entry) =>
      `${entry.manager}/${entry.operation}${entry.subresource === undefined ? '' : `/${entry.subresource}`}`,
  );
}

function conflictOf(action: () => unknown): ApiError {
  try {
    action();
  } catch (error: unknown) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a conflict');
}

describe('server-side apply and managedFields', () => {
  it('owns exactly what it applied (leaves and list items), in FieldsV1', () => {
    const api = setup();
    const created = apply(api, sts(2, ['main'], { team: 'a' }), 'deployer');
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'deployer',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2026-12-01T09:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:team': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:serviceName': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
              },
            },
          },
        },
      },
    ]);
  });

  it('removes the fields a manager stops applying, unless another manager owns them', () => {
    const api = setup();
    apply(api, sts(2, ['main', 'side'], { team: 'a', tier: 'b' }), 'deployer');
    // Another applier sets the same value: shared ownership, no conflict.
    apply(
      api,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'web', labels: { tier: 'b' } },
      },
      'labeller',
    );
    const after = apply(api, sts(2, ['main'], { team: 'a' }), 'deployer');
    const spec = after.spec as { template: { spec: { containers: { name: string }[] } } };
    expect(spec.template.spec.containers.map((c) => c.name)).toEqual(['main']);
    // tier is co-owned by the labeller (it applied the same value): it stays; side is gone.
    expect(after.metadata.labels).toEqual({ team: 'a', tier: 'b' });
  });

  it('conflicts with the scale subresource manager on spec.replicas, with the apiserver message, and takes it with force', () => {
    const api = setup();
    apply(api, sts(2, ['main'], {}), 'deployer');
    api.patch(
      { info: statefulSets, namespace: 'default', name: 'web' },
      { spec: { replicas: 3 } },
      { contentType: PatchType.merge, subresource: 'scale', manager: 'kubectl' },
    );
    const stored = api.get(statefulSets, 'default', 'web');
    expect(managers(stored)).toEqual(['deployer/Apply', 'kubectl/Update/scale']);
    const error = conflictOf(() => apply(api, sts(5, ['main'], {}), 'deployer'));
    expect(error.code).toBe(409);
    expect(error.reason).toBe('Conflict');
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas',
    );
    expect(error.details).toEqual({
      causes: [
        {
          reason: 'FieldManagerConflict',
          message: 'conflict with "kubectl" with subresource "scale" using apps/v1',
          field: '.spec.replicas',
        },
      ],
    });
    // Applying the live value is shared ownership, not a conflict.
    expect(() => apply(api, sts(3, ['main'], {}), 'deployer')).not.toThrow();
    const forced = apply(api, sts(5, ['main'], {}), 'deployer', true);
    expect((forced.spec as { replicas: number }).replicas).toBe(5);
    expect(managers(forced)).toEqual(['deployer/Apply']);
  });

  it('lists every conflict by manager when there are several', () => {
    const api = setup();
    apply(api, sts(2, ['main'], { team: 'a' }), 'deployer');
    const error = conflictOf(() => apply(api, sts(4, ['main'], { team: 'b' }), 'other'));
    expect(error.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "deployer":\n- .metadata.labels.team\n- .spec.replicas',
    );
  });

  it('gives an update the fields it changed and takes them from their previous manager', () => {
    const api = setup();
    api.create(
      configMaps,
      'default',
      { metadata: { name: 'c' }, data: { a: '1' } },
      { manager: 'kubectl-create' },
    );
    const created = api.get(configMaps, 'default', 'c');
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-12-01T09:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    ]);
    const replaced = api.replace(
      { info: configMaps, namespace: 'default', name: 'c' },
      { metadata: { name: 'c' }, data: { a: '2', b: '3' } },
      { manager: 'kubectl-edit' },
    );
    expect(replaced.metadata.managedFields).toMatchObject([
      // The creator keeps the map node itself (a member without children is `{}`).
      { manager: 'kubectl-create', fieldsV1: { 'f:data': {} } },
      { manager: 'kubectl-edit', fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } } },
    ]);
  });
});
