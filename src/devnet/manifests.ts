// The Kubernetes objects of the embedded devnet: namespace, keys Secret, genesis ConfigMap,
// the validator StatefulSet and its headless Service, a full node for queries, and the aggregate
// Service. The same shapes as k8s/base/localnet, sized for one machine: each node keeps its data
// dir (vote guard and blocks) in a PersistentVolumeClaim of its ordinal, and a validator pod's
// preStop hook holds its termination until the manager says its validator has left the set.

export const DEVNET_NAMESPACE = 'devnet';
export const VALIDATOR_STATEFULSET = 'validator';
export const VALIDATOR_SERVICE = 'validators';
export const FULL_NODE_STATEFULSET = 'full-node';
export const KEYS_SECRET = 'validators-private-keys';
export const GENESIS_CONFIGMAP = 'v1-localnet-genesis';
export const NODE_IMAGE = 'localnet-node';
/** The manager's bearer token, for the validators' preStop hook (key `token`). */
export const MANAGER_TOKEN_SECRET = 'cluster-manager-rpc-token';
/** Where a node keeps its data dir, a volume from the StatefulSet's `data` claim template. */
export const DATA_DIR = '/var/lib/localnet';

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
  /** The nodes' fidelity profile (`localnet-node run --fidelity`; default intended). */
  fidelity?: 'intended' | 'v1';
  /**
   * How long a node told to stop keeps voting while still in the active set
   * (`--shutdown-drain-ms`; default the node's 20 s). Tests whose subject is not the drain shorten it.
   */
  shutdownDrainMs?: number;
}

/**
 * How a validator pod waits for its validator to leave before it stops: `cluster-manager
 * await-departure` as its preStop hook, for at most `hookTimeoutSeconds`, within a grace period
 * that also leaves the node its own drain (`--shutdown-drain-ms`, 20 s) after SIGTERM.
 */
export interface DepartureSettings {
  managerUrl: string;
  hookTimeoutSeconds: number;
}

/** The grace period a hook of `hookTimeoutSeconds` needs: the hook, the node's drain, a margin. */
export function gracePeriodFor(hookTimeoutSeconds: number): number {
  return hookTimeoutSeconds + 20 + 10;
}

export const DEFAULT_DEPARTURE_TIMEOUT_SECONDS = 60;

type Json = Record<string, unknown>;

export function namespace(): Json {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEVNET_NAMESPACE } };
}

/** The manager's token as a Secret, read by the validators' preStop hook. */
export function managerTokenSecret(token: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: MANAGER_TOKEN_SECRET, namespace: DEVNET_NAMESPACE },
    type: 'Opaque',
    stringData: { token },
  };
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

function nodeContainer(
  settings: NodeSettings,
  withKeys: boolean,
  departure: DepartureSettings | undefined,
): Json {
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
      DATA_DIR,
      ...(settings.fidelity === undefined ? [] : ['--fidelity', settings.fidelity]),
      ...(settings.shutdownDrainMs === undefined
        ? []
        : ['--shutdown-drain-ms', String(settings.shutdownDrainMs)]),
    ],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      // The manager drives views of a manual pacemaker through the node's debug RPC (RPC mode,
      // intended profile): off unless asked for (docs/adr/0023-debug-routes-off-unless-asked.md).
      { name: 'LOCALNET_DEBUG_ROUTES', value: 'true' },
      // Each pod reads the key of its own ordinal + 1 from the mounted Secret.
      ...(withKeys
        ? [{ name: 'POCKET_PRIVATE_KEY_FILE_TEMPLATE', value: '/etc/validator-keys/{id}' }]
        : []),
      // For the preStop hook (hooks run with the container's env).
      ...(departure === undefined
        ? []
        : [
            { name: 'CLUSTER_MANAGER_URL', value: departure.managerUrl },
            {
              name: 'CLUSTER_MANAGER_TOKEN',
              valueFrom: { secretKeyRef: { name: MANAGER_TOKEN_SECRET, key: 'token' } },
            },
          ]),
    ],
    ports: [
      { name: 'rpc', containerPort: 50832 },
      { name: 'p2p', containerPort: 42069 },
    ],
    readinessProbe: { httpGet: { path: '/v1/health', port: 'rpc' }, periodSeconds: 1 },
    // The node keeps voting until its validator has left the set (or the manager says it never
    // will): a scale-down by anyone, however slow the manager, never stops a voter early.
    ...(departure === undefined
      ? {}
      : {
          lifecycle: {
            preStop: {
              exec: {
                command: [
                  'cluster-manager',
                  'await-departure',
                  '--timeout',
                  String(departure.hookTimeoutSeconds),
                ],
              },
            },
          },
        }),
    volumeMounts: [
      { name: 'genesis', mountPath: '/etc/localnet', readOnly: true },
      { name: 'data', mountPath: DATA_DIR },
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
  departure?: DepartureSettings | undefined;
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
          terminationGracePeriodSeconds:
            parts.departure === undefined ? 30 : gracePeriodFor(parts.departure.hookTimeoutSeconds),
          containers: [nodeContainer(parts.settings, parts.withKeys, parts.departure)],
          volumes: [
            { name: 'genesis', configMap: { name: GENESIS_CONFIGMAP } },
            ...(parts.withKeys
              ? [{ name: 'keys', secret: { secretName: KEYS_SECRET, defaultMode: 0o400 } }]
              : []),
          ],
        },
      },
      // The data dir (vote guard, committed blocks) per ordinal: it outlives the pod, so a pod
      // that comes back — after a delete, a crash or a scale to 0 — resumes where it was.
      // Claims are kept on scale-down and when the set is deleted (Retain, the default).
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    },
  };
}

/**
 * The validator StatefulSet: each pod takes the key of its ordinal + 1 from the mounted Secret;
 * with `departure`, its preStop hook waits for the manager (see DepartureSettings).
 */
export function validatorStatefulSet(
  replicas: number,
  settings: NodeSettings,
  departure?: DepartureSettings,
): Json {
  return nodeStatefulSet({
    name: VALIDATOR_STATEFULSET,
    service: VALIDATOR_SERVICE,
    replicas,
    labels: VALIDATOR_LABELS,
    settings,
    withKeys: true,
    departure,
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
