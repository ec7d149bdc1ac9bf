// The eviction subresource and PodDisruptionBudgets with kubectl (`drain`, which evicts through
// policy/v1 and retries a 429 every 5 s until its timeout) and the Python client:
// pkg/registry/core/pod/storage/eviction.go (checkAndDecrement, canIgnorePDB) and the disruption
// controller (pkg/controller/disruption/disruption.go) keeping the budget's status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { eachKubectl } from '../support/kubectl-gate.ts';
import { available, pythonReason, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ kubelet: { mode: 'simulated' } });
});

afterAll(() => cluster.stop());

const workload = (name: string, budget: JsonLike) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: name },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'main', image: 'nginx' }] },
          },
        },
      },
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name, namespace: name },
        spec: { selector: { matchLabels: { app: name } }, ...budget },
      },
    ],
  });
type JsonLike = Record<string, unknown>;

interface BudgetStatus {
  currentHealthy?: number;
  desiredHealthy?: number;
  disruptionsAllowed?: number;
  expectedPods?: number;
  observedGeneration?: number;
}

async function budget(namespace: string): Promise<BudgetStatus> {
  const response = await fetchJson(
    `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/${namespace}`,
  );
  return (response as { status?: BudgetStatus }).status ?? {};
}

async function fetchJson(path: string, init: { method?: string; body?: unknown } = {}) {
  const result = await cluster.python(`
import sys, json
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.ApiClient()
try:
    data = api.call_api(${JSON.stringify(path)}, ${JSON.stringify(init.method ?? 'GET')},
        header_params={'Content-Type': 'application/json', 'Accept': 'application/json'},
        body=json.loads(${JSON.stringify(JSON.stringify(init.body ?? null))}),
        _preload_content=False, auth_settings=['BearerToken'])
    print(json.dumps({'code': data[1], 'body': json.loads(data[0].data)}))
except client.ApiException as e:
    print(json.dumps({'code': e.status, 'retryAfter': e.headers.get('Retry-After'), 'body': json.loads(e.body)}))
`);
  const parsed = JSON.parse(result.stdout) as { code: number; body: unknown };
  return init.method === undefined ? parsed.body : parsed;
}

describe.skipIf(pythonReason !== '')('eviction', () => {
  it('refuses with 429 and the DisruptionBudget cause when the budget allows no disruption', async () => {
    await cluster.core.createNamespace({ body: { metadata: { name: 'ev' } } });
    const [any] = available([33]);
    if (any === undefined) return;
    expect(
      (
        await cluster.kubectl(any, ['apply', '-f', '-'], {
          input: workload('ev', { minAvailable: 2 }),
        })
      ).code,
    ).toBe(0);
    const status = await waitFor(
      async () => {
        const s = await budget('ev');
        return s.currentHealthy === 2 ? s : pending(JSON.stringify(s));
      },
      { what: 'the budget sees two healthy pods' },
    );
    expect(status).toMatchObject({
      desiredHealthy: 2,
      disruptionsAllowed: 0,
      expectedPods: 2,
      observedGeneration: 1,
    });
    const pods = await cluster.core.listNamespacedPod({ namespace: 'ev' });
    const name = pods.items[0]?.metadata?.name ?? '';
    const refused = (await fetchJson(`/api/v1/namespaces/ev/pods/${name}/eviction`, {
      method: 'POST',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'ev' } },
    })) as { code: number; body: JsonLike };
    expect(refused.code).toBe(429);
    expect(refused.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      code: 429,
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget ev needs 2 healthy pods and has 2 currently',
          },
        ],
      },
    });
    // The pod is still there, not being deleted.
    const still = await cluster.core.readNamespacedPod({ namespace: 'ev', name });
    expect(still.metadata?.deletionTimestamp).toBeUndefined();
    // A name that is not the pod's: 400 as eviction.go says.
    const mismatch = (await fetchJson(`/api/v1/namespaces/ev/pods/${name}/eviction`, {
      method: 'POST',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } },
    })) as { code: number; body: JsonLike };
    expect(mismatch.code).toBe(400);
    expect(mismatch.body.message).toBe('name in URL does not match name in Eviction object');
  });

  it('lets one pod go when the budget allows one, then refuses the next', async () => {
    await cluster.core.createNamespace({ body: { metadata: { name: 'ev1' } } });
    const [any] = available([33]);
    if (any === undefined) return;
    expect(
      (
        await cluster.kubectl(any, ['apply', '-f', '-'], {
          input: workload('ev1', { maxUnavailable: 1 }),
        })
      ).code,
    ).toBe(0);
    await waitFor(
      async () =>
        (await budget('ev1')).disruptionsAllowed === 1 ||
        pending(JSON.stringify(await budget('ev1'))),
      {
        what: 'one disruption allowed',
      },
    );
    // Cordoned, the node takes no replacement: the budget cannot recover between the evictions.
    expect((await cluster.kubectl(any, ['cordon', 'kube-emulator'])).code).toBe(0);
    const pods = (await cluster.core.listNamespacedPod({ namespace: 'ev1' })).items.map(
      (p) => p.metadata?.name ?? '',
    );
    const evict = (name: string) =>
      fetchJson(`/api/v1/namespaces/ev1/pods/${name}/eviction`, {
        method: 'POST',
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } },
      }) as Promise<{ code: number; body: JsonLike }>;
    const first = await evict(pods[0] ?? '');
    expect(first).toEqual({
      code: 201,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    });
    const second = await evict(pods[1] ?? '');
    expect(second.code).toBe(429);
    expect(await budget('ev1')).toMatchObject({
      currentHealthy: 1,
      desiredHealthy: 1,
      disruptionsAllowed: 0,
    });
    expect((await cluster.kubectl(any, ['uncordon', 'kube-emulator'])).code).toBe(0);
  });
});

describe('kubectl drain', () => {
  eachKubectl(available([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version: drain stops at the budget, uncordon lets the replacement run',
    async (binary) => {
      const ns = `drain-${binary.minor}`;
      await cluster.core.createNamespace({ body: { metadata: { name: ns } } });
      expect(
        (
          await cluster.kubectl(binary, ['apply', '-f', '-'], {
            input: workload(ns, { maxUnavailable: 1 }),
          })
        ).code,
      ).toBe(0);
      await waitFor(async () => (await budget(ns)).disruptionsAllowed === 1 || pending('budget'), {
        what: 'budget',
      });
      const drain = await cluster.kubectl(
        binary,
        [
          'drain',
          'kube-emulator',
          '--pod-selector',
          `app=${ns}`,
          '--ignore-daemonsets',
          '--timeout=8s',
        ],
        { timeoutMs: 30_000 } as never,
      );
      expect(drain.code).not.toBe(0);
      expect(drain.stdout + drain.stderr).toContain('node/kube-emulator cordoned');
      expect(drain.stdout + drain.stderr).toMatch(/evicting pod .*\/drain-/);
      expect(drain.stdout + drain.stderr).toContain(
        "Cannot evict pod as it would violate the pod's disruption budget.",
      );
      expect(drain.stdout + drain.stderr).toMatch(/pod\/\S+ evicted/);
      const nodes = await cluster.kubectl(binary, ['get', 'nodes']);
      expect(nodes.stdout).toMatch(/kube-emulator\s+Ready,SchedulingDisabled/);
      // The replacement waits for a schedulable node; uncordon lets it run and the budget recover.
      expect((await cluster.kubectl(binary, ['uncordon', 'kube-emulator'])).code).toBe(0);
      await waitFor(
        async () =>
          (await budget(ns)).currentHealthy === 2 || pending(JSON.stringify(await budget(ns))),
        {
          what: 'two healthy again',
        },
      );
      expect((await budget(ns)).disruptionsAllowed).toBe(1);
      const pdb = await cluster.kubectl(binary, ['get', 'pdb', '-n', ns]);
      expect(pdb.stdout).toMatch(
        new RegExp(
          `NAME\\s+MIN AVAILABLE\\s+MAX UNAVAILABLE\\s+ALLOWED DISRUPTIONS\\s+AGE\\n${ns}\\s+N/A\\s+1\\s+1\\s`,
        ),
      );
    },
  );
});
