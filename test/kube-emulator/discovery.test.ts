// Conformance check 1, and the health and discovery documents kubectl and client-node read.
import { describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

describe('discovery', () => {
  it.skipIf(noKubectl)(
    'kubectl version reports server v1.32 and api-resources lists the served kinds with short names (check 1)',
    async () => {
      const harness = await startHarness();
      const version = await harness.kubectl(['version', '-o', 'json']);
      expect(version.code).toBe(0);
      const parsed = JSON.parse(version.stdout) as {
        serverVersion: { major: string; minor: string };
      };
      expect(parsed.serverVersion).toMatchObject({ major: '1', minor: '32' });

      const resources = await harness.kubectl(['api-resources', '--no-headers']);
      expect(resources.code).toBe(0);
      const rows = resources.stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/));
      const find = (name: string, apiVersion: string) =>
        rows.find((row) => row[0] === name && row.includes(apiVersion));
      expect(find('pods', 'v1')).toContain('po');
      expect(find('secrets', 'v1')).toBeDefined();
      expect(find('events', 'v1')).toContain('ev');
      expect(find('events', 'events.k8s.io/v1')).toBeDefined();
      expect(find('leases', 'coordination.k8s.io/v1')).toBeDefined();
      expect(find('statefulsets', 'apps/v1')).toContain('sts');
      expect(find('deployments', 'apps/v1')).toContain('deploy');
      expect(find('roles', 'rbac.authorization.k8s.io/v1')).toBeDefined();
      expect(find('nodes', 'v1')).toContain('no');
      expect(find('endpoints', 'v1')).toContain('ep');
      expect(find('endpointslices', 'discovery.k8s.io/v1')).toBeDefined();
      expect(find('poddisruptionbudgets', 'policy/v1')).toContain('pdb');
      // Exactly what is served: every listed resource with the list verb answers `kubectl get`.
      const wide = await harness.kubectl(['api-resources', '--no-headers', '-o', 'wide']);
      const listable = wide.stdout
        .trim()
        .split('\n')
        .filter((line) => /\blist\b/.test(line))
        .map((line) => {
          const [name = '', ...rest] = line.trim().split(/\s+/);
          const apiVersion = rest.find((word) => /^([a-z0-9.-]+\/)?v\d/.test(word)) ?? '';
          const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
          return group === '' ? name : `${name}.${group}`;
        });
      expect(listable).toEqual(
        expect.arrayContaining([
          'nodes',
          'endpoints',
          'endpointslices.discovery.k8s.io',
          'poddisruptionbudgets.policy',
        ]),
      );
      const got = await harness.kubectl(['get', listable.join(','), '-A', '-o', 'name']);
      expect(got.stderr).toBe('');
      expect(got.code).toBe(0);
      // Subresources: eviction (policy/v1 Eviction) and ephemeralcontainers (the Pod, get patch
      // update, as the 1.32 apiserver lists it) are served.
      const v1 = (await (await fetch(`${harness.emulator.url}/api/v1`)).json()) as {
        resources: { name: string; group?: string; version?: string; kind: string }[];
      };
      const names = v1.resources.map((r) => r.name);
      expect(v1.resources.find((r) => r.name === 'pods/eviction')).toMatchObject({
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
      });
      expect(names).toContain('nodes/status');
      expect(v1.resources.find((r) => r.name === 'pods/ephemeralcontainers')).toEqual({
        name: 'pods/ephemeralcontainers',
        singularName: '',
        namespaced: true,
        kind: 'Pod',
        verbs: ['get', 'patch', 'update'],
      });
    },
  );

  it('answers health probes and discovery documents as JSON', async () => {
    const harness = await startHarness();
    const { url } = harness.emulator;
    for (const path of ['/healthz', '/readyz', '/livez']) {
      const response = await fetch(url + path);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('ok');
    }
    const api = await fetch(`${url}/api`);
    expect(api.headers.get('content-type')).toBe('application/json');
    expect(await api.json()).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apps = (await (await fetch(`${url}/apis/apps/v1`)).json()) as {
      resources: { name: string; kind: string; group?: string; verbs: string[] }[];
    };
    expect(apps.resources.find((r) => r.name === 'statefulsets/scale')).toMatchObject({
      group: 'autoscaling',
      kind: 'Scale',
    });
    expect(apps.resources.find((r) => r.name === 'statefulsets')?.verbs).toContain('watch');
    const unknown = await fetch(`${url}/apis/nope/v1/things`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('listens on loopback only', async () => {
    const harness = await startHarness();
    expect(new URL(harness.emulator.url).hostname).toBe('127.0.0.1');
  });
});
