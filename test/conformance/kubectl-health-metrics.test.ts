// Issue 31: what people type against an apiserver besides objects — `kubectl get --raw
// /readyz?verbose` (apiserver pkg/server/healthz/healthz.go: one `[+]<check> ok` line per check,
// then `readyz check passed`), single checks, `/metrics` (apiserver_request_total,
// apiserver_storage_objects; 403 for an account RBAC does not let get the path), and
// `kubectl api-resources` listing what is served. kubectl 1.27 and 1.33.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { eachKubectl } from '../support/kubectl-gate.ts';
import { available, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ rbac: true });
});
afterAll(() => cluster.stop());

describe('health, metrics and api-resources', () => {
  eachKubectl(available([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version: get --raw /readyz?verbose, /livez/etcd, /metrics; api-resources (and /metrics refused to an account, raw HTTP)',
    async (binary) => {
      const k = (args: string[]) => cluster.kubectl(binary, args);
      const ready = (await k(['get', '--raw', '/readyz?verbose'])).stdout.split('\n');
      expect(ready.slice(0, 3)).toEqual(['[+]ping ok', '[+]log ok', '[+]etcd ok']);
      expect(ready).toContain('[+]informer-sync ok');
      expect(ready).toContain('[+]poststarthook/rbac/bootstrap-roles ok');
      expect(ready.at(-2)).toBe('readyz check passed');
      const excluded = (await k(['get', '--raw', '/readyz?verbose&exclude=etcd'])).stdout;
      expect(excluded).toContain('[+]etcd excluded: ok');
      expect((await k(['get', '--raw', '/livez/etcd'])).stdout).toBe('ok');
      expect((await k(['get', '--raw', '/livez/nothing'])).code).not.toBe(0);
      await k(['create', 'configmap', `m-${binary.minor}`]);
      const metrics = (await k(['get', '--raw', '/metrics'])).stdout;
      expect(metrics).toMatch(
        /^apiserver_request_total\{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1"\} \d+$/m,
      );
      expect(metrics).toMatch(/^apiserver_storage_objects\{resource="namespaces"\} 4$/m);
      await k(['create', 'serviceaccount', `watcher-${binary.minor}`]);
      const token = cluster.emulator.issueToken('default', `watcher-${binary.minor}`);
      // Raw HTTP: kubectl sends no token over plain HTTP.
      const refused = await fetch(`${cluster.emulator.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toBe(
        `forbidden: User "system:serviceaccount:default:watcher-${binary.minor}" cannot get path "/metrics"`,
      );
      const resources = (await k(['api-resources', '--no-headers'])).stdout;
      for (const row of [
        /^pods\s+po\s+v1\s+true\s+Pod$/m,
        /^statefulsets\s+sts\s+apps\/v1\s+true\s+StatefulSet$/m,
        /^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m,
        /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m,
      ])
        expect(resources).toMatch(row);
    },
  );
});
