// kubectl 1.32 and newer send built-in kinds as protobuf on `create secret|configmap|namespace|
// deployment|serviceaccount`; 1.31 and older send JSON. Each create must work, and the object
// stored from a protobuf body must be the one stored from the JSON body of the same command.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, requestsTo, startCluster, type Cluster } from './support.ts';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** 1.31 sends JSON (the control), 1.32 and 1.33 protobuf. */
const binaries = available([31, 32, 33]);

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster.stop();
});

/**
 * A stored object without what differs between two creates (names, uids, times, RVs) and
 * without the status the controllers write.
 */
function comparable(object: unknown, name: string): unknown {
  const { status: _status, ...rest } = (object ?? {}) as Record<string, unknown>;
  return JSON.parse(
    JSON.stringify(rest)
      .replaceAll(name, 'NAME')
      .replace(/"(uid|resourceVersion|creationTimestamp|time)":"[^"]*"/g, '"$1":"X"'),
  ) as unknown;
}

describe.skipIf(binaries.length === 0)('kubectl create sends protobuf from 1.32 on', () => {
  it.each(binaries.map((binary) => [binary.version, binary] as const))(
    'kubectl %s creates a secret from files, a configmap, a namespace, a deployment and a service account',
    async (_, binary) => {
      const keyFile = join(cluster.dir, 'key-001');
      await writeFile(keyFile, 'private-key-001');
      const tag = `v${binary.minor}`;
      const before = cluster.emulator.requestLog.length;
      for (const args of [
        [
          'create',
          'secret',
          'generic',
          `validators-private-keys-${tag}`,
          `--from-file=001=${keyFile}`,
        ],
        ['create', 'configmap', `genesis-${tag}`, '--from-literal=chain=localnet'],
        ['create', 'namespace', `devnet-${tag}`],
        ['create', 'deployment', `web-${tag}`, '--image=nginx:1.27', '--replicas=0', '--port=80'],
        ['create', 'serviceaccount', `manager-${tag}`],
      ]) {
        const result = await cluster.kubectl(binary, args);
        expect(result.stderr, args.join(' ')).toBe('');
        expect(result.code, args.join(' ')).toBe(0);
      }
      const creates = cluster.emulator.requestLog
        .slice(before)
        .filter((request) => request.method === 'POST');
      expect(creates).toHaveLength(5);
      for (const request of creates) {
        expect(
          request.contentType.startsWith(PROTOBUF),
          `${request.path} ${request.contentType}`,
        ).toBe(binary.minor >= 32);
      }
      const secret = await cluster.core.readNamespacedSecret({
        name: `validators-private-keys-${tag}`,
        namespace: 'default',
      });
      expect(Buffer.from(secret.data?.['001'] ?? '', 'base64').toString()).toBe('private-key-001');
    },
  );

  it.skipIf(binaries.length < 2 || binaries[0]?.minor !== 31)(
    'stores from a protobuf body exactly what it stores from the JSON body of the same command',
    async () => {
      const store = cluster.emulator.store;
      const pairs: [string, string, string][] = [
        ['/secrets', 'default', 'validators-private-keys-'],
        ['/configmaps', 'default', 'genesis-'],
        ['/namespaces', '', 'devnet-'],
        ['apps/deployments', 'default', 'web-'],
        ['/serviceaccounts', 'default', 'manager-'],
      ];
      for (const [table, namespace, prefix] of pairs) {
        const json = store.get(table, namespace, `${prefix}v31`);
        expect(json, `${prefix}v31`).toBeDefined();
        for (const binary of binaries.filter((b) => b.minor >= 32)) {
          const name = `${prefix}v${binary.minor}`;
          const fromProtobuf = store.get(table, namespace, name);
          expect(comparable(fromProtobuf, name), name).toEqual(comparable(json, `${prefix}v31`));
        }
      }
      // replicas: 0 is a pointer field: it must survive protobuf as 0 (not become the default 1).
      expect(
        (
          store.get('apps/deployments', 'default', 'web-v33')?.spec as
            { replicas?: number } | undefined
        )?.replicas ?? 0,
      ).toBe(0);
    },
  );

  it.skipIf(binaries.every((binary) => binary.minor < 32))(
    'answers kubectl describe in protobuf when it asks for it',
    async () => {
      const binary = binaries.at(-1);
      if (binary === undefined) return;
      const result = await cluster.kubectl(binary, [
        'describe',
        'secret',
        `validators-private-keys-v${binary.minor}`,
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('001:  15 bytes');
      const protobufGets = requestsTo(
        cluster.emulator,
        'GET',
        `/secrets/validators-private-keys-v${binary.minor}`,
      ).filter((request) => request.accept.startsWith(PROTOBUF));
      expect(protobufGets.length).toBeGreaterThan(0);
    },
  );
});
