// The manager's process loads client-node without the classes of every API group (ADR 0019): with
// the hook registered, importing the manager resolves none of client-node's index modules, and
// KubeConfig still configures the lean clients.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const script = `
import { registerHooks } from 'node:module';
import { registerLeanClientNode } from './src/manager/kube/lean-client-node.ts';
registerLeanClientNode();
const seen = [];
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });
await import('./src/manager/run.ts');
const { loadKubeClients } = await import('./src/manager/kube/client.ts');
const { KubeConfig } = await import('@kubernetes/client-node/dist/config.js');
const kc = new KubeConfig();
kc.loadFromOptions({ clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }], users: [{ name: 'u' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
const kube = loadKubeClients({ namespace: 'n', env: {}, kubeConfig: kc });
const heavy = seen.filter((u) => /client-node\\/dist\\/(index|api)\\.js$|\\/gen\\/index\\.js$|\\/gen\\/types\\//.test(u));
process.stdout.write(JSON.stringify({ heavy, clientNode: seen.filter((u) => u.includes('client-node')).length,
  core: typeof kube.core.listNamespacedPod }));
`;

it('the manager loads client-node without its index of every API group', () => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).toBe('');
  const out = JSON.parse(run.stdout) as { heavy: string[]; clientNode: number; core: string };
  expect(out.heavy).toEqual([]);
  expect(out.clientNode).toBeGreaterThan(10);
  expect(out.core).toBe('function');
});
