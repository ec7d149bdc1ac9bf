// SelfSubjectAccessReview / SelfSubjectRulesReview / SelfSubjectReview answered from the
// emulator's RBAC, impersonation (`--as`), and TokenRequest tokens the emulator then accepts for
// their ServiceAccount (and stops accepting when it expires, its account or bound object goes).
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { realClock, type Clock } from '../../src/kube-emulator/clock.ts';
import { kubectlVersions } from '../../src/harness/kubectl.ts';
import { failure, startHarness, type Harness } from './harness.ts';
import { eachKubectl } from '../support/kubectl-gate.ts';

/** A clock that tests can move forward (timers stay real). */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    setTimeout: (fn, ms) => realClock.setTimeout(fn, ms),
    advance(ms) {
      offset += ms;
    },
  };
}

/** A Role letting ServiceAccount `manager` read pods, bound in `default`. */
async function seedRbac(h: Harness): Promise<void> {
  const rbac = h.kc.makeApiClient(RbacAuthorizationV1Api);
  await h.core.createNamespacedServiceAccount({
    namespace: 'default',
    body: { metadata: { name: 'manager' } },
  });
  await rbac.createNamespacedRole({
    namespace: 'default',
    body: {
      metadata: { name: 'pod-reader' },
      rules: [
        { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] },
        {
          apiGroups: ['apps'],
          resources: ['statefulsets/scale'],
          resourceNames: ['validator'],
          verbs: ['patch'],
        },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: 'manager-reads-pods' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'manager', namespace: 'default' }],
    },
  });
}

function clientFor(h: Harness, token: string): KubeConfig {
  const kc = new KubeConfig();
  const options = h.emulator.kubeconfigFor();
  kc.loadFromOptions({ ...options, users: [{ name: 'admin', token }] });
  return kc;
}

describe('access reviews', () => {
  it('answers can-i from RBAC: the admin may do anything, an account what its Roles grant', async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await seedRbac(h);
    const admin = h.kc.makeApiClient(AuthorizationV1Api);
    const asAdmin = await admin.createSelfSubjectAccessReview({
      body: {
        spec: { resourceAttributes: { verb: 'delete', resource: 'secrets', namespace: 'x' } },
      },
    });
    expect(asAdmin.status?.allowed).toBe(true);
    const manager = clientFor(h, h.emulator.issueToken('default', 'manager')).makeApiClient(
      AuthorizationV1Api,
    );
    const can = async (attributes: Record<string, string>) =>
      (
        await manager.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { namespace: 'default', ...attributes } } },
        })
      ).status;
    expect(await can({ verb: 'list', resource: 'pods' })).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "manager-reads-pods/default" of Role "pod-reader" to ServiceAccount "manager/default"',
    });
    expect(await can({ verb: 'get', resource: 'pods', subresource: 'log' })).toMatchObject({
      allowed: true,
    });
    expect(await can({ verb: 'delete', resource: 'pods' })).toEqual({ allowed: false });
    expect(
      await can({
        verb: 'patch',
        group: 'apps',
        resource: 'statefulsets',
        subresource: 'scale',
        name: 'validator',
      }),
    ).toMatchObject({ allowed: true });
    expect(
      await can({
        verb: 'patch',
        group: 'apps',
        resource: 'statefulsets',
        subresource: 'scale',
        name: 'other',
      }),
    ).toEqual({ allowed: false });
    expect(await can({ verb: 'list', resource: 'pods', namespace: 'kube-system' })).toEqual({
      allowed: false,
    });
    const nonResource = await manager.createSelfSubjectAccessReview({
      body: { spec: { nonResourceAttributes: { verb: 'get', path: '/healthz' } } },
    });
    expect(nonResource.status?.allowed).toBe(true);
    const neither = await failure(manager.createSelfSubjectAccessReview({ body: { spec: {} } }));
    expect(neither).toMatchObject({ code: 422, reason: 'Invalid' });
    // Nothing was stored: the review kinds cannot be read back.
    const listed = await fetch(
      `${h.emulator.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`,
    );
    expect(listed.status).toBe(405);
  });

  it("lists an account's rules (can-i --list) and says who it is (auth whoami)", async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await seedRbac(h);
    const kc = clientFor(h, h.emulator.issueToken('default', 'manager'));
    const rules = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({
      body: { spec: { namespace: 'default' } },
    });
    expect(rules.status?.incomplete).toBe(false);
    expect(rules.status?.resourceRules).toEqual(
      expect.arrayContaining([
        { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'] },
        {
          verbs: ['create'],
          apiGroups: ['authorization.k8s.io'],
          resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        },
      ]),
    );
    const elsewhere = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({
      body: { spec: { namespace: 'kube-system' } },
    });
    expect(elsewhere.status?.resourceRules.map((r) => r.resources)).not.toContainEqual([
      'pods',
      'pods/log',
    ]);
    const me = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(me.status?.userInfo).toEqual({
      username: 'system:serviceaccount:default:manager',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
  });

  it('lets the admin impersonate an account (--as), and refuses impersonation to an account', async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await seedRbac(h);
    const post = (token: string | undefined, as: string) =>
      fetch(`${h.emulator.url}/api/v1/namespaces/default/secrets`, {
        headers: {
          'Impersonate-User': as,
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        },
      });
    expect((await post(undefined, 'system:serviceaccount:default:manager')).status).toBe(403);
    expect(
      (
        await fetch(`${h.emulator.url}/api/v1/namespaces/default/pods`, {
          headers: { 'Impersonate-User': 'system:serviceaccount:default:manager' },
        })
      ).status,
    ).toBe(200);
    const byAccount = await post(h.emulator.issueToken('default', 'manager'), 'someone');
    expect(byAccount.status).toBe(403);
    expect(((await byAccount.json()) as { message: string }).message).toBe(
      'users "someone" is forbidden: User "system:serviceaccount:default:manager" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  eachKubectl(
    kubectlVersions()
      .filter((k) => k.minor < 32)
      .slice(-1),
    'no kubectl older than 1.32 (those send JSON bodies)',
  )('kubectl $version: auth can-i, --as and --list', async (binary) => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await seedRbac(h);
    const run = (args: string[]) => h.kubectl(args, { binary });
    expect((await run(['auth', 'can-i', 'delete', 'nodes'])).stdout).toBe('yes\n');
    const as = ['--as', 'system:serviceaccount:default:manager'];
    expect((await run(['auth', 'can-i', 'list', 'pods', ...as])).stdout).toBe('yes\n');
    const no = await run(['auth', 'can-i', 'delete', 'pods', ...as]);
    expect(no).toMatchObject({ code: 1, stdout: 'no\n' });
    const list = await run(['auth', 'can-i', '--list', ...as]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^pods\/log\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(list.stdout).toMatch(/^statefulsets\.apps\/scale\s+\[\]\s+\[validator\]\s+\[patch\]$/m);
  });
});

describe('TokenRequest', () => {
  it('issues a token the emulator accepts for the account, until it expires', async () => {
    const clock = movableClock();
    const h = await startHarness({ rbac: true, kubelet: false, clock });
    await seedRbac(h);
    const issued = await h.core.createNamespacedServiceAccountToken({
      name: 'manager',
      namespace: 'default',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = issued.status?.token ?? '';
    expect(token.split('.')).toHaveLength(3);
    expect(issued.spec?.audiences).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(issued.status?.expirationTimestamp?.getTime()).toBeGreaterThan(clock.now() + 590_000);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      sub: string;
    };
    expect(claims.sub).toBe('system:serviceaccount:default:manager');
    const core = clientFor(h, token).makeApiClient(CoreV1Api);
    expect((await core.listNamespacedPod({ namespace: 'default' })).kind).toBe('PodList');
    expect(await failure(core.listNamespacedSecret({ namespace: 'default' }))).toMatchObject({
      code: 403,
    });
    clock.advance(601_000);
    const expired = await core.listNamespacedPod({ namespace: 'default' }).catch((e: unknown) => e);
    expect((expired as { code?: number }).code).toBe(401);
  });

  it('stops accepting a token when its account is recreated or its bound pod deleted; refuses bad requests', async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await seedRbac(h);
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'holder' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const token = async (boundObjectRef?: { kind: string; name: string; apiVersion: string }) =>
      (
        await h.core.createNamespacedServiceAccountToken({
          name: 'manager',
          namespace: 'default',
          body: {
            spec: { audiences: [], ...(boundObjectRef === undefined ? {} : { boundObjectRef }) },
          },
        })
      ).status?.token ?? '';
    const listPods = async (t: string) =>
      (
        await fetch(`${h.emulator.url}/api/v1/namespaces/default/pods`, {
          headers: { Authorization: `Bearer ${t}` },
        })
      ).status;
    const bound = await token({ kind: 'Pod', apiVersion: 'v1', name: 'holder' });
    const plain = await token();
    expect(await listPods(bound)).toBe(200);
    await h.core.deleteNamespacedPod({ name: 'holder', namespace: 'default' });
    expect(await listPods(bound)).toBe(401);
    expect(await listPods(plain)).toBe(200);
    await h.core.deleteNamespacedServiceAccount({ name: 'manager', namespace: 'default' });
    await h.core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'manager' } },
    });
    expect(await listPods(plain)).toBe(401);
    const tampered = `${plain.slice(0, -4)}AAAA`;
    expect(await listPods(tampered)).toBe(401);
    expect(
      await failure(
        h.core.createNamespacedServiceAccountToken({
          name: 'manager',
          namespace: 'default',
          body: { spec: { audiences: [], expirationSeconds: 599 } },
        }),
      ),
    ).toMatchObject({
      code: 422,
      message:
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    });
    expect(
      await failure(
        h.core.createNamespacedServiceAccountToken({
          name: 'nobody',
          namespace: 'default',
          body: { spec: { audiences: [] } },
        }),
      ),
    ).toMatchObject({ code: 404, message: 'serviceaccounts "nobody" not found' });
    // A token for another audience is not one the apiserver accepts.
    const foreign = await h.core.createNamespacedServiceAccountToken({
      name: 'manager',
      namespace: 'default',
      body: { spec: { audiences: ['vault'] } },
    });
    expect(await listPods(foreign.status?.token ?? '')).toBe(401);
  });

  eachKubectl(
    kubectlVersions()
      .filter((k) => k.minor < 32)
      .slice(-1),
    'no kubectl older than 1.32 (those send JSON bodies)',
  )('kubectl $version create token: the printed token works for the account', async (binary) => {
    // Over HTTPS: kubectl sends no bearer token to a plain-HTTP server.
    const h = await startHarness({ https: true, rbac: true, kubelet: false });
    await seedRbac(h);
    const created = await h.kubectl(['create', 'token', 'manager', '--duration=15m'], {
      binary,
    });
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    const pods = await h.kubectl(['get', 'pods', `--token=${token}`, '-o', 'name'], { binary });
    expect(pods.code).toBe(0);
    const secrets = await h.kubectl(['get', 'secrets', `--token=${token}`], { binary });
    expect(secrets.stderr).toContain(
      'User "system:serviceaccount:default:manager" cannot list resource "secrets"',
    );
  });
});
