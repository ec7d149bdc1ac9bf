// The Kubernetes objects of the embedded devnet: namespace, keys Secret, genesis ConfigMap,
// the validator StatefulSet and its headless Service, a full node for queries, and the aggregate
// Service. The same shapes as k8s/base/localnet, sized for one machine.

export const DEVNET_NAMESPACE = 'devnet';
export const VALIDATOR_STATEFULSET = 'validator';
export const VALIDATOR_SERVICE = 'validators';
export const FULL_NODE_STATEFULSET = 'full-node';
export const KEYS_SECRET = 'validators-private-keys';
export const GENESIS_CONFIGMAP = 'v1-localnet-genesis';
export const NODE_IMAGE = 'localnet-node';

const VALIDATOR_LABELS = {
  'app.kubernetes.io/name': 'localnet-node',
  'pokt.network/purpose': 'validator',
};
const FULL_NODE_LABELS = {
  'app.kubernetes.io/name': 'localnet-node',
  'pokt.network/purpose': 'full',
};

export interface NodeSettings {
  pacemaker: 'auto' | 'manual';
  blockIntervalMs: number;
}

type Json = Record<string, unknown>;

export function namespace(): Json {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEVNET_NAMESPACE } };
}

/** The keys Secret in Pocket's layout ("001" → 128-hex). */
export function keysSecret(keys: ReadonlyMap<string, string>): Json {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: KEYS_SECRET, namespace: DEVNET_NAMESPACE },
    type: 'Opaque',
    stringData: Object.fromEntries(keys),
  };
}

export function genesisConfigMap(genesisJson: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GENESIS_CONFIGMAP, namespace: DEVNET_NAMESPACE },
    data: { 'genesis.json': genesisJson },
  };
}

function nodeContainer(settings: NodeSettings, withKeys: boolean): Json {
  return {
    name: 'node',
    image: `${NODE_IMAGE}:dev`,
    args: [
      'run',
      '--genesis',
      '/etc/localnet/genesis.json',
      '--pacemaker',
      settings.pacemaker,
      '--block-interval-ms',
      String(settings.blockIntervalMs),
      '--data-dir',
      '/var/lib/localnet',
    ],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      // Each pod reads the key of its own ordinal + 1 from the mounted Secret.
      ...(withKeys
        ? [{ name: 'POCKET_PRIVATE_KEY_FILE_TEMPLATE', value: '/etc/validator-keys/{id}' }]
        : []),
    ],
    ports: [
      { name: 'rpc', containerPort: 50832 },
      { name: 'p2p', containerPort: 42069 },
    ],
    readinessProbe: { httpGet: { path: '/v1/health', port: 'rpc' }, periodSeconds: 1 },
    volumeMounts: [
      { name: 'genesis', mountPath: '/etc/localnet', readOnly: true },
      { name: 'data', mountPath: '/var/lib/localnet' },
      ...(withKeys ? [{ name: 'keys', mountPath: '/etc/validator-keys', readOnly: true }] : []),
    ],
  };
}

function nodeStatefulSet(parts: {
  name: string;
  service: string;
  replicas: number;
  labels: Json;
  settings: NodeSettings;
  withKeys: boolean;
}): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: parts.name, namespace: DEVNET_NAMESPACE, labels: parts.labels },
    spec: {
      replicas: parts.replicas,
      serviceName: parts.service,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: parts.labels },
      template: {
        metadata: { labels: parts.labels },
        spec: {
          terminationGracePeriodSeconds: 30,
          containers: [nodeContainer(parts.settings, parts.withKeys)],
          volumes: [
            { name: 'genesis', configMap: { name: GENESIS_CONFIGMAP } },
            // The vote guard: survives process restarts within the pod, as an emptyDir does.
            { name: 'data', emptyDir: {} },
            ...(parts.withKeys
              ? [{ name: 'keys', secret: { secretName: KEYS_SECRET, defaultMode: 0o400 } }]
              : []),
          ],
        },
      },
    },
  };
}

/** The validator StatefulSet: each pod takes the key of its ordinal + 1 from the mounted Secret. */
export function validatorStatefulSet(replicas: number, settings: NodeSettings): Json {
  return nodeStatefulSet({
    name: VALIDATOR_STATEFULSET,
    service: VALIDATOR_SERVICE,
    replicas,
    labels: VALIDATOR_LABELS,
    settings,
    withKeys: true,
  });
}

/** One full node (no key) that serves the chain RPC to the manager and to users. */
export function fullNodeStatefulSet(settings: NodeSettings): Json {
  return nodeStatefulSet({
    name: FULL_NODE_STATEFULSET,
    service: FULL_NODE_STATEFULSET,
    replicas: 1,
    labels: FULL_NODE_LABELS,
    settings,
    withKeys: false,
  });
}

export function headlessService(name: string, labels: Json): Json {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: DEVNET_NAMESPACE },
    spec: {
      clusterIP: 'None',
      selector: labels,
      ports: [
        { name: 'rpc', port: 50832, targetPort: 'rpc' },
        { name: 'p2p', port: 42069, targetPort: 'p2p' },
      ],
    },
  };
}

export function services(): Json[] {
  return [
    headlessService(VALIDATOR_SERVICE, VALIDATOR_LABELS),
    headlessService(FULL_NODE_STATEFULSET, FULL_NODE_LABELS),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'pocket-validators', namespace: DEVNET_NAMESPACE },
      spec: {
        selector: { 'pokt.network/purpose': 'validator' },
        ports: [{ name: 'rpc', port: 50832, targetPort: 'rpc' }],
      },
    },
  ];
}
