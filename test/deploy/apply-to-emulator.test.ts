// The base manifests, applied with kubectl 1.32 to the emulator (HTTPS, RBAC enforced), run for real:
// the process kubelet maps the `localnet-node` image to `localnet-node run` (and its binary
// `cluster-manager`, which the validators' preStop hook runs) and `cluster-manager` to
// `cluster-manager run`. Only the addresses are adapted to loopback (genesis service URLs, the
// chain RPC URL, the manager's port and URL), since pods here are processes on 127.0.0.1 without
// DNS.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePorts } from '../../src/devnet/ports.ts';
import { startEmulator, type Emulator } from '../../src/kube-emulator/index.ts';
import { parsePrivateKey, PocketRpcClient } from '../../src/pocket/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { binPath } from '../support/run-bin.ts';
import { findObject, kubectlPath, kustomizeBuild, type KubeObject } from './support/manifests.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const run = promisify(execFile);
const NAMESPACE = 'default';
const GENESIS_VALIDATORS = 4;

let emulator: Emulator;
let dir: string;
let kubeconfig: string;
let chain: PocketRpcClient;
let keys: Map<string, string>;
let managerPort: number;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(
    kubectlPath(),
    [
      '--kubeconfig',
      kubeconfig,
      '--cache-dir',
      join(dir, 'kubectl-cache'),
      '--request-timeout=20s',
      ...args,
    ],
    {
      timeout: 120_000,
    },
  );
  return stdout;
}

/** The base build with loopback addresses: the genesis validators' p2p ports are fixed up front. */
function loopbackObjects(objects: KubeObject[], ports: number[], chainRpc: number): KubeObject[] {
  const copy = structuredClone(objects);
  const genesisMap = findObject(copy, 'ConfigMap', 'v1-localnet-genesis') as KubeObject & {
    data: Record<string, string>;
  };
  const genesis = JSON.parse(genesisMap.data['genesis.json'] ?? '{}') as {
    validators: { service_url: string }[];
  };
  genesis.validators.forEach((validator, ordinal) => {
    validator.service_url = `127.0.0.1:${ports[ordinal * 2 + 1] ?? 0}`;
  });
  genesisMap.data['genesis.json'] = JSON.stringify(genesis);
  const config = findObject(copy, 'ConfigMap', 'cluster-manager-config') as KubeObject & {
    data: Record<string, string>;
  };
  config.data.CM_CHAIN_RPC_URL = `http://127.0.0.1:${chainRpc}`;
  config.data.CM_SERVICE_URL_TEMPLATE = '{podIP}:{port:p2p}';
  config.data.CM_RPC_PORT = String(managerPort);
  config.data.CM_READY_DEBOUNCE = '500ms';
  const validators = findObject(copy, 'StatefulSet', 'validator') as KubeObject & {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  for (const variable of validators.spec.template.spec.containers[0]?.env ?? []) {
    if (variable.name === 'CLUSTER_MANAGER_URL') variable.value = `http://127.0.0.1:${managerPort}`;
  }
  return copy;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cm-apply-'));
  const ports = await freePorts(GENESIS_VALIDATORS * 2 + 1);
  managerPort = ports[GENESIS_VALIDATORS * 2] ?? 0;
  emulator = await startEmulator({
    dir: join(dir, 'emulator'),
    // kubectl sends a bearer token only over TLS, so RBAC is tested over HTTPS.
    https: true,
    rbac: true,
    token: 'admin-token-for-the-test',
    kubelet: {
      mode: 'process',
      images: {
        'localnet-node': {
          command: process.execPath,
          args: [binPath('localnet-node')],
          binaries: {
            'cluster-manager': { command: process.execPath, args: [binPath('cluster-manager')] },
          },
        },
        'cluster-manager': { command: process.execPath, args: [binPath('cluster-manager')] },
      },
      hostPort: (pod, port) => {
        if (pod.name.startsWith('cluster-manager-') && port.name === 'http') return managerPort;
        const ordinal = /^validator-(\d)$/.exec(pod.name)?.[1];
        if (ordinal === undefined || Number(ordinal) >= GENESIS_VALIDATORS) return undefined;
        if (port.name === 'rpc') return ports[Number(ordinal) * 2];
        if (port.name === 'p2p') return ports[Number(ordinal) * 2 + 1];
        return undefined;
      },
      env: {
        PATH: `${join(process.execPath, '..')}:${process.env.PATH ?? ''}`,
        LOCALNET_SHUTDOWN_DRAIN_MS: '0',
      },
    },
  });
  kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'), {
    namespace: NAMESPACE,
    token: 'admin-token-for-the-test',
  });
  chain = new PocketRpcClient({ baseUrl: `http://127.0.0.1:${ports[0] ?? 0}` });

  const objects = loopbackObjects(kustomizeBuild('k8s/base'), ports, ports[0] ?? 0);
  const secret = findObject(objects, 'Secret', 'validators-private-keys') as KubeObject & {
    stringData: Record<string, string>;
  };
  keys = new Map(
    Object.entries(secret.stringData).map(([id, hex]) => [id, parsePrivateKey(hex).address]),
  );
  const manifest = objects.map((o) => `---\n${stringify(o)}`).join('');
  const applied = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      kubectlPath(),
      [
        '--kubeconfig',
        kubeconfig,
        '--cache-dir',
        join(dir, 'kubectl-cache'),
        'apply',
        '-n',
        NAMESPACE,
        '-f',
        '-',
      ],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
    );
    child.stdin?.end(manifest);
  });
  expect(applied).toMatch(/statefulset.apps\/validator created/);
  expect(applied).toMatch(/deployment.apps\/cluster-manager created/);
}, 120_000);

afterAll(async () => {
  await emulator.stop();
  await rm(dir, { recursive: true, force: true });
});

async function signersAt(height: number): Promise<string[]> {
  const block = await chain.block(height);
  return (block.block_header.quorum_cert.threshold_sig.signatures ?? []).map((s) => s.address);
}

describe.skipIf(noKubectl)('k8s/base on the emulator (kubectl, RBAC enforced)', () => {
  it('rolls out the validators and the manager', async () => {
    await kubectl('rollout', 'status', 'statefulset/validator', '-n', NAMESPACE, '--timeout=90s');
    await kubectl(
      'rollout',
      'status',
      'deployment/cluster-manager',
      '-n',
      NAMESPACE,
      '--timeout=90s',
    );
    const ready = await fetch(`http://127.0.0.1:${managerPort}/readyz`);
    expect(ready.status).toBe(200);
    // Each validator's data dir is a claim of its ordinal, bound.
    const claims = await kubectl('get', 'pvc', '-n', NAMESPACE, '-o', 'json');
    const bound = (
      JSON.parse(claims) as { items: { metadata: { name: string }; status: { phase: string } }[] }
    ).items
      .filter((claim) => claim.status.phase === 'Bound')
      .map((claim) => claim.metadata.name)
      .sort();
    expect(bound).toEqual([
      'data-validator-0',
      'data-validator-1',
      'data-validator-2',
      'data-validator-3',
    ]);
  }, 120_000);

  it('the manager talks to the API server only as its ServiceAccount, whose Role is enforced', async () => {
    const saToken = emulator.issueToken(NAMESPACE, 'cluster-manager');
    const managerRequests = emulator.requestLog.filter(
      (r) => r.authorization === `Bearer ${saToken}`,
    );
    expect(managerRequests.length).toBeGreaterThan(0);
    expect(managerRequests.some((r) => r.path.endsWith('/pods'))).toBe(true);
    const kc = new KubeConfig();
    kc.loadFromOptions(
      emulator.kubeconfigFor(
        { namespace: NAMESPACE, name: 'cluster-manager' },
        { namespace: NAMESPACE },
      ),
    );
    const core = kc.makeApiClient(CoreV1Api);
    await expect(core.listNamespacedSecret({ namespace: NAMESPACE })).rejects.toMatchObject({
      code: 403,
    });
    await expect(
      core.readNamespacedSecret({ namespace: NAMESPACE, name: 'cluster-manager-rpc-token' }),
    ).rejects.toMatchObject({ code: 403 });
    // It may delete pods (a validator pod that started before its key: CM_RESTART_STALE_PODS), and
    // nothing else: not the keys Secret it reads.
    await expect(
      core.deleteNamespacedSecret({ namespace: NAMESPACE, name: 'validators-private-keys' }),
    ).rejects.toMatchObject({ code: 403 });
    const own = await core.readNamespacedSecret({
      namespace: NAMESPACE,
      name: 'validators-private-keys',
    });
    expect(Object.keys(own.data ?? {})).toContain('001');
  });

  it('kubectl scale 4 → 6: the new validators are staked and sign blocks', async () => {
    const start = await chain.height();
    await kubectl('scale', 'statefulset/validator', '-n', NAMESPACE, '--replicas=6');
    const wanted = ['005', '006'].map((id) => keys.get(id) ?? '');
    let scanned = start;
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const height = await chain.height();
        for (let h = scanned + 1; h <= height; h++)
          for (const address of await signersAt(h)) seen.add(address);
        scanned = height;
        const missing = wanted.filter((a) => !seen.has(a));
        return missing.length === 0
          ? true
          : pending(`height ${height}; not signing yet: ${missing.join(', ')}`);
      },
      {
        what: 'validators 005 and 006 to sign committed blocks',
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
    const rows = await chain.validators();
    for (const address of wanted)
      expect(rows.find((r) => r.address === address)?.unstaking_height).toBe(-1);
    const log = await readFile(
      emulator.kubelet.logPath(
        NAMESPACE,
        (
          await kubectl(
            'get',
            'pods',
            '-n',
            NAMESPACE,
            '-l',
            'app.kubernetes.io/name=cluster-manager',
            '-o',
            'jsonpath={.items[0].metadata.name}',
          )
        ).trim(),
      ),
      'utf8',
    );
    expect(log).toMatch(/stake committed/);
    for (const hex of Object.values(
      (
        findObject(
          kustomizeBuild('k8s/base'),
          'Secret',
          'validators-private-keys',
        ) as KubeObject & { stringData: Record<string, string> }
      ).stringData,
    )) {
      expect(log).not.toContain(hex.slice(0, 64));
    }
  }, 120_000);

  it('kubectl scale 6 → 4: pods 4 and 5 stay until their validators have left the set; claims stay', async () => {
    const leaving = new Map(
      ['005', '006'].map((id, i) => [`validator-${i + 4}`, keys.get(id) ?? '']),
    );
    const core = new KubeConfig();
    core.loadFromFile(kubeconfig);
    const api = core.makeApiClient(CoreV1Api);
    const from = await chain.height();
    await kubectl('scale', 'statefulset/validator', '-n', NAMESPACE, '--replicas=4');
    // Every look: a leaving pod that is gone must belong to a validator already out of the set.
    const early: string[] = [];
    await waitFor(
      async () => {
        const [pods, rows] = await Promise.all([
          api.listNamespacedPod({ namespace: NAMESPACE }),
          chain.validators(),
        ]);
        const height = await chain.height();
        const present = new Set(pods.items.map((pod) => pod.metadata?.name));
        for (const [pod, address] of leaving) {
          const row = rows.find((r) => r.address === address);
          // Unstaking (or unstaked) rows are out of the active set at once (docs/localnet-node.md).
          const inSet = row !== undefined && row.unstaking_height === -1;
          if (!present.has(pod) && inSet) early.push(`${pod} gone at height ${height}`);
        }
        const left = [...leaving.keys()].filter((pod) => present.has(pod));
        return left.length === 0
          ? true
          : pending(`height ${height}; still there: ${left.join(', ')}`);
      },
      { what: 'validator-4 and validator-5 to go', timeoutMs: 90_000, intervalMs: 100 },
    );
    expect(early).toEqual([]);
    // They voted on the way out: both sign certificates after the scale-down was asked for.
    const to = await chain.height();
    const signed = new Set<string>();
    for (let h = from + 1; h <= to; h++)
      for (const address of await signersAt(h)) signed.add(address);
    for (const [pod, address] of leaving) expect(signed.has(address), pod).toBe(true);
    const hooks = await readFile(
      emulator.kubelet.logPath(NAMESPACE, 'validator-5').replace(/\.log$/, '.hooks.log'),
      'utf8',
    );
    expect(hooks).toMatch(/validator-5 \(006\): LEFT_SET/);
    const claims = await api.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    expect(claims.items.map((c) => c.metadata?.name).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `data-validator-${i}`),
    );
  }, 120_000);

  it('kubectl delete pod validator-1: the new pod resumes from its claim at the height it had', async () => {
    const before = await chain.height();
    await kubectl('delete', 'pod', 'validator-1', '-n', NAMESPACE, '--wait=true');
    await kubectl('rollout', 'status', 'statefulset/validator', '-n', NAMESPACE, '--timeout=90s');
    const log = emulator.kubelet.logPath(NAMESPACE, 'validator-1');
    const resumed = await waitFor(
      async () => {
        const line = (await readFile(log, 'utf8'))
          .split('\n')
          .filter((l) => l.includes('resumed from the data dir'))
          .at(-1);
        return line === undefined
          ? pending('not resumed yet')
          : (JSON.parse(line) as { height: number });
      },
      { what: 'validator-1 to resume from its data dir' },
    );
    expect(resumed.height).toBeGreaterThanOrEqual(before);
    const key = keys.get('002') ?? '';
    const from = await chain.height();
    await waitFor(
      async () => {
        const height = await chain.height();
        for (let h = from + 1; h <= height; h++)
          if ((await signersAt(h)).includes(key)) return true;
        return pending(`height ${height}; 002 not signing yet`);
      },
      { what: 'validator 002 to sign again', timeoutMs: 60_000, intervalMs: 250 },
    );
  }, 120_000);
});
