// Every validator workload the project ships keeps its node's data in a claim of its ordinal and
// holds its termination until the manager lets it go: k8s/base (and the dev overlay Tilt uses),
// the embedded devnet, and the patch for Pocket V1's chart. The hook must reach the manager of
// the same build (its Service and port, its token Secret), and the grace period must cover the
// hook and what the node does after SIGTERM.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEPARTURE_TIMEOUT_SECONDS,
  fullNodeStatefulSet,
  gracePeriodFor,
  MANAGER_TOKEN_SECRET,
  managerTokenSecret,
  validatorStatefulSet,
} from '../../src/devnet/manifests.ts';
import { findObject, kustomizeBuild, type KubeObject } from './support/manifests.ts';
import { noKubectl, withKubectl } from '../support/kubectl-gate.ts';

/** The node's own drain after SIGTERM while still in the set (localnet-node's default). */
const NODE_DRAIN_SECONDS = 20;

interface Container {
  name: string;
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  volumeMounts?: { name: string; mountPath: string }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

interface StatefulSetShape {
  spec: {
    persistentVolumeClaimRetentionPolicy?: { whenDeleted: string; whenScaled: string };
    volumeClaimTemplates?: { metadata: { name: string }; spec: { accessModes: string[] } }[];
    template: {
      spec: {
        terminationGracePeriodSeconds?: number;
        containers: Container[];
        volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[];
      };
    };
  };
}

const shape = (object: unknown): StatefulSetShape => object as StatefulSetShape;

function env(
  container: Container,
  name: string,
): NonNullable<Container['env']>[number] | undefined {
  return container.env?.find((variable) => variable.name === name);
}

/** The data dir: the `--data-dir` argument is the mount of the `data` claim template. */
function expectDataDirInClaim(set: StatefulSetShape, container: Container): void {
  const args = container.args ?? [];
  const dataDir = args[args.indexOf('--data-dir') + 1];
  expect(args).toContain('--data-dir');
  const mount = container.volumeMounts?.find((m) => m.mountPath === dataDir);
  expect(mount?.name).toBe('data');
  const template = set.spec.volumeClaimTemplates?.find((t) => t.metadata.name === 'data');
  expect(template?.spec.accessModes).toEqual(['ReadWriteOnce']);
  // Not also a pod volume of that name (the claim would replace it, silently).
  expect(set.spec.template.spec.volumes?.some((v) => v.name === 'data') ?? false).toBe(false);
  expect(set.spec.persistentVolumeClaimRetentionPolicy).toEqual({
    whenDeleted: 'Retain',
    whenScaled: 'Retain',
  });
}

/** The hook is `cluster-manager await-departure --timeout T`; returns T. */
function hookTimeout(container: Container): number {
  const command = container.lifecycle?.preStop?.exec?.command ?? [];
  expect(command.slice(0, 3)).toEqual(['cluster-manager', 'await-departure', '--timeout']);
  return Number(command[3]);
}

function expectHookReachesManager(objects: KubeObject[], container: Container): void {
  // `cluster-manager`, or with the overlay's name prefix (`ts-cluster-manager`).
  const service = objects.find(
    (o) => o.kind === 'Service' && /(^|-)cluster-manager$/.test(o.metadata.name),
  ) as KubeObject & { spec: { ports: { port: number }[] } };
  expect(env(container, 'CLUSTER_MANAGER_URL')?.value).toBe(
    `http://${service.metadata.name}:${service.spec.ports[0]?.port ?? 0}`,
  );
  const ref = env(container, 'CLUSTER_MANAGER_TOKEN')?.valueFrom?.secretKeyRef;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref?.name) as
    (KubeObject & { data?: Record<string, string> }) | undefined;
  expect(secret, `Secret ${ref?.name ?? '?'} in the build`).toBeDefined();
  expect(Object.keys(secret?.data ?? {})).toContain(ref?.key);
}

describe.skipIf(noKubectl).each(['k8s/base', 'k8s/overlays/dev'])(
  '%s: the validator StatefulSet',
  (dir) => {
    const objects = withKubectl(() => kustomizeBuild(dir));
    const set = withKubectl(() => shape(findObject(objects, 'StatefulSet', 'validator')));
    const node = withKubectl(() =>
      set.spec.template.spec.containers.find((c) => c.name === 'node')!,
    );

    it('keeps the data dir in a claim of its ordinal, kept on scale-down and delete', () => {
      expectDataDirInClaim(set, node);
    });

    it('runs await-departure as its preStop hook, against the manager of the same build', () => {
      const timeout = hookTimeout(node);
      expect(timeout).toBeGreaterThanOrEqual(60);
      expect(set.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
        timeout + NODE_DRAIN_SECONDS,
      );
      expectHookReachesManager(objects, node);
    });
  },
);

describe('the devnet’s StatefulSets', () => {
  const settings = { pacemaker: 'auto' as const, blockIntervalMs: 1000 };
  const departure = {
    managerUrl: 'http://127.0.0.1:8080',
    hookTimeoutSeconds: DEFAULT_DEPARTURE_TIMEOUT_SECONDS,
  };

  it('keep every node’s data dir in a claim (validators and the full node)', () => {
    for (const made of [
      validatorStatefulSet(4, settings, departure),
      fullNodeStatefulSet(settings),
    ]) {
      const set = shape(made);
      expectDataDirInClaim(set, set.spec.template.spec.containers[0]!);
    }
  });

  it('hold a validator’s termination for the manager, within a grace period that covers it', () => {
    const set = shape(validatorStatefulSet(4, settings, departure));
    const node = set.spec.template.spec.containers[0]!;
    const timeout = hookTimeout(node);
    expect(timeout).toBe(DEFAULT_DEPARTURE_TIMEOUT_SECONDS);
    expect(set.spec.template.spec.terminationGracePeriodSeconds).toBe(gracePeriodFor(timeout));
    expect(gracePeriodFor(timeout)).toBeGreaterThanOrEqual(timeout + NODE_DRAIN_SECONDS);
    expect(env(node, 'CLUSTER_MANAGER_URL')?.value).toBe(departure.managerUrl);
    expect(env(node, 'CLUSTER_MANAGER_TOKEN')?.valueFrom?.secretKeyRef).toEqual({
      name: MANAGER_TOKEN_SECRET,
      key: 'token',
    });
    expect(managerTokenSecret('t')).toMatchObject({
      metadata: { name: MANAGER_TOKEN_SECRET },
      stringData: { token: 't' },
    });
    // The full node is no validator: nothing to wait for.
    expect(shape(fullNodeStatefulSet(settings)).spec.template.spec.containers[0]?.lifecycle).toBe(
      undefined,
    );
  });
});

describe.skipIf(noKubectl)('k8s/overlays/pocket-v1/validators: the patch for V1’s chart', () => {
  const objects = withKubectl(() => kustomizeBuild('k8s/overlays/pocket-v1/validators'));
  const set = withKubectl(() => shape(findObject(objects, 'StatefulSet', 'validator-001-pocket')));
  const pocket = withKubectl(() =>
    set.spec.template.spec.containers.find((c) => c.name === 'pocket')!,
  );
  const manager = withKubectl(() => kustomizeBuild('k8s/overlays/pocket-v1'));

  it('holds termination with a bash hook (V1’s image has no cluster-manager) and a grace period for it', () => {
    const command = pocket.lifecycle?.preStop?.exec?.command ?? [];
    expect(command.slice(0, 2)).toEqual(['bash', '-c']);
    expect(command[2]).toContain('/v1/departures/');
    const timeout = Number(env(pocket, 'DEPARTURE_TIMEOUT_SECONDS')?.value);
    expect(timeout).toBeGreaterThanOrEqual(60);
    // V1's node exits at once on SIGTERM: the hook is all it needs time for.
    expect(set.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(timeout);
  });

  it('asks the manager that k8s/overlays/pocket-v1 deploys, with its token Secret', () => {
    expectHookReachesManager(manager, pocket);
  });

  it('keeps the chart’s four key variables, all from the validator’s Secret key, and its image', () => {
    // charts/pocket/templates/statefulset.yaml:55, 69-90 at 58c9b650; values.yaml:147 (tag
    // `latest`), build/localnet/Tiltfile:206 (repository `pocket-image`).
    const keys = [
      'POCKET_PRIVATE_KEY',
      'POCKET_CONSENSUS_PRIVATE_KEY',
      'POCKET_P2P_PRIVATE_KEY',
      'POCKET_IBC_HOST_PRIVATE_KEY',
    ];
    for (const name of keys) {
      expect(env(pocket, name)?.valueFrom, name).toEqual({
        secretKeyRef: { name: 'validators-private-keys', key: '001' },
      });
    }
    expect((pocket as { image?: string }).image).toBe('pocket-image:latest');
  });

  it('leaves V1’s own data volume (the chart’s claim) in place', () => {
    expect(set.spec.template.spec.volumes?.find((v) => v.name === 'data-dir')).toEqual({
      name: 'data-dir',
      persistentVolumeClaim: { claimName: 'validator-001-pocket-data' },
    });
  });
});
