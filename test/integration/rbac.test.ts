// Issue 31: the devnet enforces RBAC and runs the manager under exactly k8s/base's Role. The
// manager scales (drain annotation, scale subresource, Events) with nothing but that Role; the
// `default` ServiceAccount cannot read the keys; a rule taken out of the Role is a 403 the
// manager reports, as on a cluster (plugin/pkg/auth/authorizer/rbac/rbac.go; the message of
// staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage).
import { readFile } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runKubectl } from '../../src/harness/kubectl.ts';
import { useDevnet } from './support.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const devnet = useDevnet('rbac');

/** The HTTP status of a GET without a token, trusting the devnet's CA. */
function statusWithoutToken(url: string): Promise<number | undefined> {
  const ca = devnet.h.devnet?.emulator.caCert;
  return new Promise((resolve, reject) => {
    const request = httpsGet(url, { ca }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('error', reject);
  });
}

/** kubectl 1.32 with the manager's kubeconfig (its ServiceAccount's token). */
function asManager(args: readonly string[]) {
  const { dir } = devnet.h.info;
  return runKubectl(args, {
    kubeconfig: join(dir, 'manager-kubeconfig'),
    cacheDir: join(dir, 'kube-cache-manager'),
    home: dir,
  });
}

describe.skipIf(noKubectl)('the devnet with RBAC enforced', { timeout: 120_000 }, () => {
  it("gives the manager's ServiceAccount exactly k8s/base's Role, bound by k8s/base's RoleBinding", async () => {
    const { h } = devnet;
    const role = await h.kubectl(['get', 'role', 'cluster-manager', '-o', 'json']);
    const base = parse(await readFile('k8s/base/cluster-manager/role.yaml', 'utf8')) as {
      rules: unknown[];
    };
    expect((JSON.parse(role.stdout) as { rules: unknown[] }).rules).toEqual(base.rules);
    const manager = await readFile(join(h.info.dir, 'manager.env'), 'utf8');
    expect(manager).toContain(`KUBECONFIG=${join(h.info.dir, 'manager-kubeconfig')}`);
    const whoami = await asManager([
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username}',
    ]);
    expect(whoami.stdout).toBe('system:serviceaccount:devnet:cluster-manager');
  });

  it('refuses what the Role does not name: other Secrets, the default account, deleting the set, no token', async () => {
    const { h } = devnet;
    expect((await asManager(['get', 'secret', 'validators-private-keys'])).code).toBe(0);
    const list = await asManager(['get', 'secrets']);
    expect(list.code).not.toBe(0);
    expect(list.stderr).toContain(
      'secrets is forbidden: User "system:serviceaccount:devnet:cluster-manager" cannot list resource "secrets" in API group "" in the namespace "devnet"',
    );
    const other = await asManager(['get', 'secret', 'cluster-manager-rpc-token']);
    expect(other.stderr).toContain(
      'secrets "cluster-manager-rpc-token" is forbidden: User "system:serviceaccount:devnet:cluster-manager" cannot get resource "secrets"',
    );
    expect(
      (await asManager(['delete', 'statefulset', 'validator', '--wait=false'])).stderr,
    ).toMatch(
      /statefulsets.apps "validator" is forbidden: .* cannot delete resource "statefulsets" in API group "apps"/,
    );
    const canI = await h.kubectl([
      'auth',
      'can-i',
      'get',
      'secret/validators-private-keys',
      '--as',
      'system:serviceaccount:devnet:default',
    ]);
    expect(canI.stdout.trim()).toBe('no');
    expect(await statusWithoutToken(`${h.info.kubeApi}/api/v1/namespaces/devnet/secrets`)).toBe(
      401,
    );
  });

  it('the manager scales up and down (drain, scale subresource, Events) under the Role alone', async () => {
    const { h } = devnet;
    const up = await h.scaleTo(5);
    expect(up.status).toBe(200);
    await h.expectStakedSet(['001', '002', '003', '004', '005']);
    const down = await h.scaleTo(4);
    expect(down.status).toBe(200);
    await h.expectStakedSet(['001', '002', '003', '004']);
    const log = await readFile(join(h.info.dir, 'manager.log'), 'utf8');
    expect(log).not.toMatch(/forbidden|\b403\b/i);
  });

  it('a rule taken out of the Role is a 403 the manager names, with the missing rule', async () => {
    const { h } = devnet;
    const role = JSON.parse(
      (await h.kubectl(['get', 'role', 'cluster-manager', '-o', 'json'])).stdout,
    ) as { rules: { resources: string[] }[] };
    const without = role.rules.filter((rule) => !rule.resources.includes('statefulsets/scale'));
    expect(without.length).toBe(role.rules.length - 1);
    const patch = JSON.stringify([{ op: 'replace', path: '/rules', value: without }]);
    expect(
      (await h.kubectl(['patch', 'role', 'cluster-manager', '--type=json', '-p', patch])).code,
    ).toBe(0);
    try {
      const refused = await h.scaleTo(5, { timeoutSeconds: 10 });
      // The manager answers with the apiserver's 403 message and the rule its Role lacks
      // (KUBE_FORBIDDEN, not retried); before, it was KUBE_UNAVAILABLE 'HTTP 403 Forbidden'.
      expect(refused.status).toBe(500);
      expect(refused.body).toMatchObject({
        error: {
          code: 'KUBE_FORBIDDEN',
          details: { verb: 'patch', resource: 'statefulsets/scale', group: 'apps' },
        },
      });
      expect((refused.body as { error: { message: string } }).error.message).toContain(
        'cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "devnet" (the Role needs a rule with apiGroups ["apps"], resources ["statefulsets/scale"], verbs ["patch"])',
      );
      // Its log keeps the apiserver's message (quoted twice over in the JSON line).
      const log = (await readFile(join(h.info.dir, 'manager.log'), 'utf8')).replaceAll('\\', '');
      expect(log).toContain(
        'statefulsets.apps "validator" is forbidden: User "system:serviceaccount:devnet:cluster-manager" cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "devnet"',
      );
    } finally {
      const back = JSON.stringify([{ op: 'replace', path: '/rules', value: role.rules }]);
      expect(
        (await h.kubectl(['patch', 'role', 'cluster-manager', '--type=json', '-p', back])).code,
      ).toBe(0);
    }
  });
});
