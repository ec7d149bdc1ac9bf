// The checked-in keys Secret and genesis are what the generators make, and they agree with the
// StatefulSet and with the manager's own id mapping and service-URL rendering, so the genesis
// validators are exactly the pods validator-0 … validator-3 as the manager sees them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { genesisArgs, keysArgs, LOCALNET } from '../../scripts/localnet-manifests.ts';
import { loadConfig } from '../../src/manager/config.ts';
import { createIdMapper } from '../../src/manager/discovery/id-mapping.ts';
import { renderServiceUrl } from '../../src/manager/discovery/pod-view.ts';
import { parsePrivateKey } from '../../src/pocket/index.ts';
import { runBin } from '../support/run-bin.ts';
import {
  containerOf,
  findObject,
  kustomizeBuild,
  readRepoFile,
  repoRoot,
  stringData,
} from './support/manifests.ts';
import { noKubectl, withKubectl } from '../support/kubectl-gate.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';

interface GenesisValidator {
  address: string;
  public_key: string;
  service_url: string;
}

const genesis = JSON.parse(readRepoFile(LOCALNET.genesisFile)) as {
  validators: GenesisValidator[];
  accounts: { address: string }[];
  genesis_time: { seconds: number };
};
const objects = withKubectl(() => kustomizeBuild('k8s/base/localnet'));
const statefulSet = withKubectl(() => findObject(objects, 'StatefulSet', 'validator'));
const keys = withKubectl(() => stringData(findObject(objects, 'Secret', LOCALNET.secretName)));
const scratch = mkdtempSync(join(tmpdir(), 'cm-deploy-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the keys Secret', () => {
  it.skipIf(noKubectl)(
    'is exactly what `cluster-manager keys generate` makes from the fixed seed',
    async () => {
      const out = join(scratch, 'keys.yaml');
      const result = await runBin('cluster-manager', keysArgs(out));
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(readRepoFile(LOCALNET.keysFile));
    },
  );

  it.skipIf(noKubectl)(
    `holds ${LOCALNET.keyCount} keys, far more than the genesis validators`,
    () => {
      expect(Object.keys(keys)).toHaveLength(LOCALNET.keyCount);
      expect(LOCALNET.keyCount).toBeGreaterThan(LOCALNET.validators);
    },
  );
});

describe('the genesis', () => {
  const replicas = (): number => (statefulSet.spec as { replicas: number }).replicas;

  it.skipIf(noKubectl)('stakes as many validators as the StatefulSet starts', () => {
    expect(replicas()).toBe(LOCALNET.validators);
    expect(genesis.validators).toHaveLength(replicas());
    expect(genesis.genesis_time.seconds).toBe(Date.parse(LOCALNET.genesisTime) / 1000);
  });

  it.skipIf(noKubectl)(
    "stakes each pod's own key, as the manager's ordinal mapping names it",
    () => {
      const config = loadConfig({ env: { CM_CHAIN_RPC_URL: 'http://x:1' } });
      const mapper = createIdMapper(config, pocketIds);
      genesis.validators.forEach((validator, ordinal) => {
        const mapped = mapper.idOf({ name: `validator-${ordinal}`, ordinal, annotations: {} });
        if (!('id' in mapped)) throw new Error(mapped.problem);
        const key = parsePrivateKey(keys[mapped.id]);
        expect(validator.address).toBe(key.address);
        expect(validator.public_key).toBe(key.publicKeyHex);
      });
      expect(genesis.accounts.map((a) => a.address)).toEqual(
        Object.values(keys).map((hex) => parsePrivateKey(hex).address),
      );
    },
  );

  it.skipIf(noKubectl)(
    'gives each validator the service URL the manager would stake for its pod',
    () => {
      const base = kustomizeBuild('k8s/base');
      const config = stringData(findObject(base, 'ConfigMap', 'cluster-manager-config'));
      const template = config.CM_SERVICE_URL_TEMPLATE!;
      const serviceName = (statefulSet.spec as { serviceName: string }).serviceName;
      genesis.validators.forEach((validator, ordinal) => {
        const pod: V1Pod = {
          metadata: { name: `validator-${ordinal}`, namespace: 'localnet' },
          status: { podIP: '10.0.0.9' },
        };
        const url = renderServiceUrl(template, pod, {
          namespace: 'localnet',
          statefulSet: {
            name: 'validator',
            namespace: 'localnet',
            uid: 'u',
            replicas: replicas(),
            serviceName,
            scaleTarget: undefined,
          },
          ordinal,
          id: String(ordinal + 1).padStart(3, '0'),
          serviceUrlTemplate: template,
          nodeRpcPortName: 'rpc',
          readySince: undefined,
        });
        expect(validator.service_url).toBe(url);
      });
    },
  );

  it('is what `localnet-node genesis` makes (npm run localnet:manifests -- --check)', () => {
    const output = execFileSync(
      process.execPath,
      [join(repoRoot, 'scripts/localnet-manifests.ts'), '--check'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(output).toMatch(/current/);
  });
});

describe('the validator container uses the localnet-node contract', () => {
  const node = withKubectl(() => containerOf(statefulSet, 'node'));

  it.skipIf(noKubectl)(
    'runs `localnet-node run --genesis <file> --pacemaker auto --block-interval-ms 1000 --data-dir <claim>`',
    () => {
      expect(node.image).toMatch(/^localnet-node:/);
      expect(node.args).toEqual([
        'run',
        '--genesis',
        '/etc/localnet/genesis/genesis.json',
        '--pacemaker',
        'auto',
        '--block-interval-ms',
        '1000',
        '--data-dir',
        '/var/lib/localnet',
      ]);
      const genesisMount = node.volumeMounts?.find((m) => m.mountPath === '/etc/localnet/genesis');
      const volume = (
        statefulSet.spec as {
          template: { spec: { volumes: { name: string; configMap?: { name: string } }[] } };
        }
      ).template.spec.volumes.find((v) => v.name === genesisMount?.name);
      const configMap = findObject(objects, 'ConfigMap', 'v1-localnet-genesis');
      expect(volume?.configMap?.name).toBe(configMap.metadata.name);
      expect(JSON.parse(stringData(configMap)['genesis.json']!)).toEqual(genesis);
    },
  );

  it.skipIf(noKubectl)(
    'lets each pod pick its own key: POD_NAME and POCKET_PRIVATE_KEY_FILE_TEMPLATE on the keys mount',
    () => {
      const env = Object.fromEntries((node.env ?? []).map((v) => [v.name, v]));
      expect(env.POD_NAME?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
      const template = env.POCKET_PRIVATE_KEY_FILE_TEMPLATE?.value ?? '';
      expect(template).toBe('/etc/localnet/keys/{id}');
      expect(node.volumeMounts?.some((m) => `${m.mountPath}/{id}` === template)).toBe(true);
    },
  );

  it('names flags that `localnet-node run --help` lists', async () => {
    const help = await runBin('localnet-node', ['run', '--help']);
    for (const flag of ['--genesis', '--pacemaker', '--block-interval-ms', '--data-dir'])
      expect(help.stdout).toContain(flag);
  });

  it.skipIf(noKubectl)('matches the genesis arguments the script passes', () => {
    expect(genesisArgs('k.yaml', 4)).toEqual([
      'genesis',
      '--keys',
      'k.yaml',
      '--validators',
      '4',
      '--service-url-template',
      LOCALNET.serviceUrlTemplate,
      '--genesis-time',
      LOCALNET.genesisTime,
    ]);
  });
});
