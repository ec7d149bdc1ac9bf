// The manifests agree with the manager: every CM_* variable they set is one config.ts accepts,
// the environment they give the manager passes loadConfig, and RBAC, mounts, selectors and
// images line up with that configuration. Plus the hardening every pod must have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXTRA_VARIABLES } from '../../scripts/config-docs.ts';
import { pocketV1, pocketV1Settings } from '../../src/manager/chain/pocket/definition.ts';
import { loadConfig, SETTINGS, type Config } from '../../src/manager/config.ts';
import { compileLabelSelector } from '../../src/manager/kube/label-selector.ts';
import {
  DEPLOYABLE,
  containerOf,
  findObject,
  kustomizeBuild,
  podSpecOf,
  repoRoot,
  stringData,
  workloads,
  type Container,
  type KubeObject,
} from './support/manifests.ts';
import { noKubectl, withKubectl } from '../support/kubectl-gate.ts';

const accepted = new Set([
  ...SETTINGS.map((s) => s.env),
  ...pocketV1.settings.map((s) => s.env),
  ...EXTRA_VARIABLES.map((v) => v.env),
]);

/** The manager container's environment as the kubelet would build it (fieldRefs get a sample). */
function managerEnv(objects: readonly KubeObject[]): Record<string, string> {
  const manager = containerOf(findObject(objects, 'Deployment', 'cluster-manager'), 'manager');
  const env: Record<string, string> = {};
  for (const from of manager.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (ref === undefined) continue;
    const source = findObject(objects, from.configMapRef ? 'ConfigMap' : 'Secret', ref.name);
    expect(source.metadata.name, 'envFrom names the built object').toBe(ref.name);
    Object.assign(env, stringData(source));
  }
  for (const variable of manager.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef !== undefined) env[variable.name] = 'cluster-manager-0';
    else throw new Error(`${variable.name}: unexpected env source`);
  }
  return env;
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function rulesOf(objects: readonly KubeObject[]): Rule[] {
  return (findObject(objects, 'Role', 'cluster-manager').rules ?? []) as Rule[];
}

function allows(rules: readonly Rule[], group: string, resource: string, verb: string): Rule[] {
  return rules.filter(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  );
}

/** Loads the configuration the manager of a build would run with. */
function configOf(objects: readonly KubeObject[]): Config {
  const env = managerEnv(objects);
  const token = stringData(findObject(objects, 'Secret', 'cluster-manager-rpc-token')).token;
  return loadConfig({
    env,
    readFile: (path) => (path === env.CM_RPC_TOKEN_FILE ? token : undefined),
  });
}

function mountOf(container: Container, path: string): { name: string; mountPath: string } {
  const mount = (container.volumeMounts ?? []).find(
    (m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`),
  );
  if (mount === undefined) throw new Error(`nothing is mounted at ${path}`);
  return mount;
}

describe.skipIf(noKubectl).each(DEPLOYABLE)('%s: the manager configuration', (dir) => {
  const objects = withKubectl(() => kustomizeBuild(dir));

  it('sets only CM_* variables that config.ts accepts', () => {
    const names = Object.keys(managerEnv(objects)).filter((name) => name.startsWith('CM_'));
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !accepted.has(name))).toEqual([]);
  });

  it('passes loadConfig: every required setting is set and every value is valid', () => {
    const config = configOf(objects);
    expect(config.leaderElection).toBe(true);
    expect(config.rpcToken?.length).toBeGreaterThanOrEqual(16);
  });

  it('mounts the token file from the token Secret and the journal on a writable emptyDir', () => {
    const deployment = findObject(objects, 'Deployment', 'cluster-manager');
    const manager = containerOf(deployment, 'manager');
    const env = managerEnv(objects);
    const volumes = podSpecOf(deployment).volumes ?? [];
    const tokenMount = mountOf(manager, env.CM_RPC_TOKEN_FILE!);
    const tokenVolume = volumes.find((v) => v.name === tokenMount.name);
    expect(tokenVolume?.secret?.secretName).toBe(
      findObject(objects, 'Secret', 'cluster-manager-rpc-token').metadata.name,
    );
    expect(env.CM_RPC_TOKEN_FILE!.slice(tokenMount.mountPath.length + 1)).toBe('token');
    const journalMount = mountOf(manager, env.CM_JOURNAL_PATH!);
    expect(volumes.find((v) => v.name === journalMount.name)?.emptyDir).toBeDefined();
  });

  it('grants the keys Secret and the Lease by the names the configuration uses', () => {
    const config = configOf(objects);
    const rules = rulesOf(objects);
    for (const verb of ['get', 'list', 'watch']) {
      const secretRules = allows(rules, '', 'secrets', verb);
      expect(secretRules.length).toBe(1);
      expect(secretRules[0]!.resourceNames).toEqual([config.keysSecret]);
    }
    for (const verb of ['get', 'update'])
      expect(allows(rules, 'coordination.k8s.io', 'leases', verb)[0]?.resourceNames).toEqual([
        config.leaseName,
      ]);
    expect(allows(rules, 'coordination.k8s.io', 'leases', 'create').length).toBe(1);
    expect(allows(rules, '', 'events', 'create').length).toBe(1);
    for (const [group, resource] of [
      ['', 'pods'],
      ['apps', 'statefulsets'],
    ] as const)
      for (const verb of ['get', 'list', 'watch'])
        expect(allows(rules, group, resource, verb).length, `${resource} ${verb}`).toBe(1);
  });

  it('has no ClusterRole, no wildcard, and delete only on pods, exactly when the manager restarts stale pods', () => {
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    for (const rule of rulesOf(objects)) {
      expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
      if (rule.verbs.includes('delete'))
        expect(rule).toMatchObject({ apiGroups: [''], resources: ['pods'] });
      if (rule.resources.includes('secrets')) expect(rule.resourceNames?.length).toBe(1);
    }
    // CM_RESTART_STALE_PODS deletes a validator pod whose node started before its key was seen.
    expect(allows(rulesOf(objects), '', 'pods', 'delete').length).toBe(
      configOf(objects).restartStalePods ? 1 : 0,
    );
    const binding = findObject(objects, 'RoleBinding', 'cluster-manager');
    const role = findObject(objects, 'Role', 'cluster-manager').metadata.name;
    const account = findObject(objects, 'ServiceAccount', 'cluster-manager').metadata.name;
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role,
    });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account }]);
    expect(podSpecOf(findObject(objects, 'Deployment', 'cluster-manager')).serviceAccountName).toBe(
      account,
    );
  });

  it('serves the control RPC on CM_RPC_PORT behind the cluster-manager Service', () => {
    const config = configOf(objects);
    const manager = containerOf(findObject(objects, 'Deployment', 'cluster-manager'), 'manager');
    const http = manager.ports?.find((p) => p.name === 'http');
    expect(http?.containerPort).toBe(config.rpcPort);
    expect(manager.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(manager.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const service = findObject(objects, 'Service', 'cluster-manager');
    expect(service.spec).toMatchObject({ ports: [{ port: 8080, targetPort: 'http' }] });
  });
});

describe.skipIf(noKubectl).each(DEPLOYABLE)(
  '%s: pod hardening (Pod Security "restricted")',
  (dir) => {
    const objects = noKubectl ? [] : kustomizeBuild(dir);

    it.each(workloads(objects).map((w) => [w.metadata.name, w] as const))(
      '%s',
      (_name, workload) => {
        const pod = podSpecOf(workload);
        expect(pod.securityContext?.runAsNonRoot).toBe(true);
        expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
        expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
        for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const security = container.securityContext;
          expect(security?.allowPrivilegeEscalation, container.name).toBe(false);
          expect(security?.capabilities?.drop, container.name).toEqual(['ALL']);
          expect(security?.capabilities?.add, container.name).toBeUndefined();
          // Only the dev overlay's manager writes to its root FS (Tilt's live_update).
          const writable = dir === 'k8s/overlays/dev' && container.name === 'manager';
          expect(security?.readOnlyRootFilesystem, container.name).toBe(!writable);
          expect(container.resources?.requests?.memory, container.name).toBeDefined();
          expect(container.resources?.limits?.memory, container.name).toBeDefined();
        }
      },
    );
  },
);

describe.skipIf(noKubectl)('the images', () => {
  const version = (
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
  ).version;

  it.each(DEPLOYABLE)('%s tags our images with the package version', (dir) => {
    const ours = workloads(kustomizeBuild(dir))
      .flatMap((w) => [...podSpecOf(w).containers, ...(podSpecOf(w).initContainers ?? [])])
      .map((c) => c.image)
      .filter((image) => /^(cluster-manager|localnet-node)(:|$)/.test(image));
    expect(ours.length).toBeGreaterThan(0);
    for (const image of ours)
      expect(image).toMatch(new RegExp(`:${version.replaceAll('.', '\\.')}$`));
  });
});

describe.skipIf(noKubectl)('k8s/base: the localnet and the manager agree', () => {
  const objects = withKubectl(() => kustomizeBuild('k8s/base'));
  const config = withKubectl(() => configOf(objects));
  const validators = withKubectl(() => findObject(objects, 'StatefulSet', 'validator'));

  it('selects the validator pods with CM_POD_SELECTOR and routes pocket-validators to them', () => {
    const labels = (
      validators.spec as { template: { metadata: { labels: Record<string, string> } } }
    ).template.metadata.labels;
    expect(compileLabelSelector(config.podSelector)(labels)).toBe(true);
    const service = findObject(objects, 'Service', 'pocket-validators');
    expect(config.chainRpcUrl).toBe('http://pocket-validators:50832');
    const selector = (service.spec as { selector: Record<string, string> }).selector;
    for (const [key, value] of Object.entries(selector)) expect(labels[key]).toBe(value);
  });

  it('gives the validators the keys Secret the manager reads, holding more keys than replicas', () => {
    const secret = findObject(objects, 'Secret', config.keysSecret);
    const ids = Object.keys(stringData(secret));
    const replicas = (validators.spec as { replicas: number }).replicas;
    expect(ids.length).toBeGreaterThan(replicas);
    expect(ids).toEqual(ids.map((_id, i) => String(i + 1).padStart(3, '0')));
    const volumes = podSpecOf(validators).volumes ?? [];
    expect(volumes.some((v) => v.secret?.secretName === config.keysSecret)).toBe(true);
  });

  it('keeps the node off the Kubernetes API and probes it on /v1/health', () => {
    const pod = podSpecOf(validators);
    expect(pod.automountServiceAccountToken).toBe(false);
    const node = containerOf(validators, 'node');
    expect(node.readinessProbe?.httpGet).toEqual({ path: '/v1/health', port: 'rpc' });
    expect(node.ports?.map((p) => [p.name, p.containerPort])).toEqual([
      ['rpc', 50832],
      ['p2p', 42069],
    ]);
    expect(config.nodeRpcPortName).toBe('rpc');
  });
});

describe.skipIf(noKubectl)('k8s/overlays/pocket-v1', () => {
  const objects = withKubectl(() => kustomizeBuild('k8s/overlays/pocket-v1'));
  const config = withKubectl(() => configOf(objects));
  const pocket = withKubectl(() => pocketV1Settings(config.chainSettings));

  it("keeps its names apart from Pocket's own cluster-manager ServiceAccount, Role and binding", () => {
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'Service'])
      expect(findObject(objects, kind, 'cluster-manager').metadata.name).toBe('ts-cluster-manager');
  });

  it("configures the manager for Pocket's LocalNet layout and its p1 CLI", () => {
    expect(config.idMapping).toBe('pattern');
    expect(config.idPattern.exec('validator-007-pocket-0')?.[1]).toBe('007');
    expect(pocket.txMode).toBe('cli');
    expect(pocket.cliPath).toBe('/usr/local/bin/p1');
    expect(config.serviceUrlTemplate).toBe('validator-{id}-pocket:42069');
    // A genesis validator: V1's full nodes never sync (issue 13).
    expect(config.chainRpcUrl).toBe('http://validator-001-pocket:50832');
    expect(pocket.profile).toBe('v1');
  });

  it("mounts the config and genesis p1 loads at CM_POCKET_V1_CLI_CONFIG_PATH / CM_POCKET_V1_CLI_GENESIS_PATH, from V1's ConfigMaps", () => {
    const deployment = findObject(objects, 'Deployment', 'cluster-manager');
    const manager = containerOf(deployment, 'manager');
    const volumes = podSpecOf(deployment).volumes ?? [];
    const sourceOf = (path: string | undefined): string | undefined => {
      const mount = (manager.volumeMounts ?? []).find(
        (m) => path !== undefined && path.startsWith(`${m.mountPath}/`),
      );
      return volumes.find((v) => v.name === mount?.name)?.configMap?.name;
    };
    expect(pocket.cliConfigPath).toBe('/var/pocket/config/config.json');
    expect(pocket.cliGenesisPath).toBe('/var/pocket/genesis/genesis.json');
    expect(sourceOf(pocket.cliConfigPath)).toBe('validator-001-pocket-config');
    expect(sourceOf(pocket.cliGenesisPath)).toBe('v1-localnet-genesis');
  });

  it('gives p1 run by hand in the pod what V1’s cli-client gives it, POCKET_P2P_HOSTNAME included', () => {
    // build/localnet/manifests/cli-client.yaml:40-44, 80-86 at 58c9b650: the chart's config has
    // `p2p.hostname: ""`, and p1's Debug commands die creating their P2P module without it.
    const deployment = findObject(objects, 'Deployment', 'cluster-manager');
    const env = Object.fromEntries(
      (containerOf(deployment, 'manager').env ?? []).map((v) => [v.name, v.value]),
    );
    expect(env).toMatchObject({
      CONFIG_PATH: pocket.cliConfigPath,
      GENESIS_PATH: pocket.cliGenesisPath,
      POCKET_P2P_HOSTNAME: '127.0.0.1',
      POCKET_REMOTE_CLI_URL: config.chainRpcUrl,
    });
  });

  it('mounts p1 at CM_POCKET_V1_CLI_PATH from the init container that copies it', () => {
    const deployment = findObject(objects, 'Deployment', 'cluster-manager');
    const manager = containerOf(deployment, 'manager');
    const mount = (manager.volumeMounts ?? []).find((m) => m.mountPath === pocket.cliPath);
    expect(mount?.subPath).toBe('p1');
    const init = podSpecOf(deployment).initContainers?.find((c) =>
      (c.volumeMounts ?? []).some((m) => m.name === mount?.name),
    );
    expect(init?.command?.at(-1)).toBe(`${init?.volumeMounts?.[0]?.mountPath}/p1`);
  });

  it('only reads pods and StatefulSets (Helm owns them) and ships no localnet', () => {
    const rules = rulesOf(objects);
    for (const resource of ['pods', 'statefulsets', 'statefulsets/scale'])
      for (const verb of ['patch', 'update', 'create', 'delete'])
        expect(allows(rules, resource === 'pods' ? '' : 'apps', resource, verb)).toEqual([]);
    expect(workloads(objects).map((w) => w.metadata.name)).toEqual(['ts-cluster-manager']);
    expect(objects.some((o) => o.kind === 'Secret' && o.metadata.name === config.keysSecret)).toBe(
      false,
    );
  });
});

describe.skipIf(noKubectl)('k8s/overlays/dev', () => {
  it('runs the manager under node --watch for live_update and logs at debug', () => {
    const objects = kustomizeBuild('k8s/overlays/dev');
    const manager = containerOf(findObject(objects, 'Deployment', 'cluster-manager'), 'manager');
    expect(manager.command).toEqual([
      '/usr/bin/tini',
      '--',
      'node',
      '--watch',
      '/app/src/bin/cluster-manager.ts',
    ]);
    expect(manager.args).toEqual(['run']);
    expect(configOf(objects).logLevel).toBe('debug');
  });
});
