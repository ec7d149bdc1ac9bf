// The manager's configuration: read once from the environment (and flags), every variable checked
// against its schema, all problems reported together by name, then a frozen typed object.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Type, type Static, type TObject } from 'typebox';
import { firstSchemaError } from './config-check.ts';
import type { ChainDefinition } from './chain/definition.ts';
import { discoveryModes } from './discovery/port.ts';
import { chainNamed, DEFAULT_CHAIN, knownChains } from './chain/registry.ts';
import {
  boolean,
  duration,
  integer,
  maybe,
  oneOf,
  path,
  readSettings,
  redactedSettings,
  regex,
  settingsOf,
  size,
  text,
  url,
  type Setting,
  type SettingsInput,
} from './settings.ts';

export { Pacing } from './model.ts';
export { parseDuration, type Setting } from './settings.ts';

/** How a pod maps to the validator id that names its key in the Secret. */
export const IdMapping = {
  ordinal: 'ordinal',
  pattern: 'pattern',
  annotation: 'annotation',
} as const;
export type IdMapping = (typeof IdMapping)[keyof typeof IdMapping];

export const LogLevel = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LogLevel)[number];

/**
 * The manager's configuration, declared once: each property's schema gives its type (`Config`),
 * its validation (the check at the end of `loadConfig`, config-check.ts), and, in its `x-source` annotation,
 * its environment variable, flag, text form, default and description (SETTINGS, the flags of
 * `cluster-manager run`, and docs/configuration.md, which a test checks against it). Durations
 * are milliseconds. Key order is the order of the reference.
 */
export const ConfigSchema = Type.Object({
  discovery: oneOf(discoveryModes, {
    env: 'CM_DISCOVERY',
    flag: 'discovery',
    default: 'kubernetes',
    description:
      'Where the validators come from. kubernetes: pods, StatefulSets and the keys Secret. static: a validators file and a keys file, no cluster (see docs/static-discovery.md).',
  }),
  validatorsFile: maybe(
    path({
      env: 'CM_VALIDATORS_FILE',
      flag: 'validators-file',
      description:
        'Static discovery: YAML or JSON file listing the wanted validators ({validators: [{id, rpc, serviceUrl, hold}]}); watched, so editing it stakes and unstakes.',
    }),
  ),
  keysFile: maybe(
    path({
      env: 'CM_KEYS_FILE',
      flag: 'keys-file',
      description:
        "Static discovery: the validators' keys, as a Secret manifest (keys generate) or a map of id to key; watched. Refused when users other than its owner may read it (chmod 600).",
    }),
  ),
  namespace: maybe(
    text({
      env: 'CM_NAMESPACE',
      flag: 'namespace',
      description:
        'Namespace of the validators; default: the service account\'s, else the kubeconfig context\'s, else "default".',
    }),
  ),
  podSelector: text({
    env: 'CM_POD_SELECTOR',
    flag: 'pod-selector',
    default: 'pokt.network/purpose=validator',
    description: 'Label selector of the validator pods.',
  }),
  idMapping: oneOf(['ordinal', 'pattern', 'annotation'] as const, {
    env: 'CM_ID_MAPPING',
    flag: 'id-mapping',
    default: 'ordinal',
    description:
      "How a pod maps to a validator id: StatefulSet ordinal + 1 in the chain's id format (Pocket V1: three digits), a name pattern, or an annotation.",
  }),
  idPattern: regex({
    env: 'CM_ID_PATTERN',
    flag: 'id-pattern',
    default: '^validator-(\\d+)-pocket',
    description:
      'With id mapping "pattern": a regular expression on the pod name whose first group is the id.',
  }),
  idAnnotation: text({
    env: 'CM_ID_ANNOTATION',
    flag: 'id-annotation',
    default: 'cluster-manager.dev/validator-id',
    description: 'With id mapping "annotation": the pod annotation holding the id.',
  }),
  keysSecret: text({
    env: 'CM_KEYS_SECRET',
    flag: 'keys-secret',
    default: 'validators-private-keys',
    description: 'Secret holding the validators\' private keys, keyed by id ("001").',
  }),
  chain: text({
    env: 'CM_CHAIN',
    flag: 'chain',
    default: DEFAULT_CHAIN,
    description:
      'Which chain the manager talks to, by its registered name (built in: pocket-v1). Its own settings are named after it (CM_POCKET_V1_…, below); an unknown name is refused naming the known ones.',
  }),
  chainRpcUrl: url({
    env: 'CM_CHAIN_RPC_URL',
    flag: 'chain-rpc-url',
    required: true,
    description:
      "The chain's RPC: queries always go here (and transactions too, unless the chain's own settings send them another way).",
  }),
  serviceUrlTemplate: text({
    env: 'CM_SERVICE_URL_TEMPLATE',
    flag: 'service-url-template',
    default: '{pod}.{service}.{namespace}.svc.cluster.local:42069',
    description:
      'Service URL staked for a validator; placeholders {pod} {service} {namespace} {statefulset} {ordinal} {id} {podIP} {port:NAME}.',
  }),
  nodeRpcPortName: text({
    env: 'CM_NODE_RPC_PORT',
    flag: 'node-rpc-port',
    default: 'rpc',
    description:
      "Name (or number) of the container port of a node's own RPC, asked for its height before staking.",
  }),
  resyncIntervalMs: duration({
    env: 'CM_RESYNC_INTERVAL',
    flag: 'resync-interval',
    default: '30s',
    minimum: 1000,
    description: 'Every validator is reconciled again at this interval.',
  }),
  chainPollIntervalMs: duration({
    env: 'CM_CHAIN_POLL_INTERVAL',
    flag: 'chain-poll-interval',
    default: '500ms',
    minimum: 50,
    description: 'How often the chain height is read.',
  }),
  readyDebounceMs: duration({
    env: 'CM_READY_DEBOUNCE',
    flag: 'ready-debounce',
    default: '2s',
    description:
      'A pod that has flapped (lost readiness, or a container restarted) must stay Ready this long before its validator is staked; a pod in its first Ready spell is staked at once.',
  }),
  syncTolerance: integer({
    env: 'CM_SYNC_TOLERANCE',
    flag: 'sync-tolerance',
    default: '1',
    minimum: 0,
    maximum: 1000,
    description:
      "A node counts as synced when its height is within this many blocks of the chain's.",
  }),
  syncCheck: boolean({
    env: 'CM_SYNC_CHECK',
    flag: 'sync-check',
    default: 'true',
    description: "Ask a validator's own node for its height before staking it.",
  }),
  restartStalePods: boolean({
    env: 'CM_RESTART_STALE_PODS',
    flag: 'restart-stale-pods',
    default: 'true',
    description:
      'A wanted validator pod whose node started before its key was seen in the keys Secret (it may hold an older key) is not staked; true: the manager deletes it (once per pod) so that its StatefulSet starts it again with the current key (needs delete on pods); false: only report it (status, log, Event).',
  }),
  pacing: oneOf(['bft', 'off'] as const, {
    env: 'CM_PACING',
    flag: 'pacing',
    default: 'bft',
    description: 'bft: fewer than half the proven set may join at a time; off: no limit.',
  }),
  minValidators: size({
    env: 'CM_MIN_VALIDATORS',
    flag: 'min-validators',
    default: 'auto',
    description:
      "The manager never unstakes below this many staked validators (scale 0 stops pods, not the chain); auto: a quorum (> 2/3) of the genesis set. A forced scale lowers it. At most as many as the chain's ids.",
  }),
  concurrency: integer({
    env: 'CM_CONCURRENCY',
    flag: 'concurrency',
    default: '32',
    minimum: 1,
    maximum: 256,
    description:
      "Validators reconciled at once. The actions prepared together share one journal commit (fsync); a chain's sender may bound its own sends further (docs/configuration.md lists the chain's settings).",
  }),
  journalPath: path({
    env: 'CM_JOURNAL_PATH',
    flag: 'journal',
    default: 'cluster-manager-journal.sqlite',
    description: 'SQLite file of the action journal (must survive restarts).',
  }),
  journalMaxBytes: integer({
    env: 'CM_JOURNAL_MAX_BYTES',
    flag: 'journal-max-bytes',
    default: '209715200',
    minimum: 65536,
    maximum: 1099511627776,
    description:
      "Largest size of the journal file (200 MiB); a write past it fails as on a full disk (JOURNAL_FULL, reported, nothing sent). Keep it below the journal volume's sizeLimit (256Mi in the manifests), so that the manager reports a full journal instead of the kubelet evicting its pod.",
  }),
  hooksFile: maybe(
    path({
      env: 'CM_HOOKS_FILE',
      flag: 'hooks-file',
      description:
        'YAML or JSON file of lifecycle hooks (pre-stake, post-stake, pre-unstake, post-unstake, readiness); see docs/hooks.md. Refused when others may write it.',
    }),
  ),
  leaderElection: boolean({
    env: 'CM_LEADER_ELECTION',
    flag: 'leader-election',
    default: 'false',
    description: 'Elect a leader through a coordination.k8s.io Lease; only the leader acts.',
  }),
  pauseDepartureMarginMs: duration({
    env: 'CM_PAUSE_DEPARTURE_MARGIN',
    flag: 'pause-departure-margin',
    default: '60s',
    minimum: 0,
    description:
      'While paused, a validator pod the cluster removes (kubectl scale, a deleted StatefulSet) is held by its preStop hook, its validator staked, until this long before the kubelet kills it (its grace period ends); then the validator is unstaked anyway, so that its node votes until it has left the set instead of halting the chain. See docs/operations.md.',
  }),
  leaseName: text({
    env: 'CM_LEASE_NAME',
    flag: 'lease-name',
    default: 'cluster-manager',
    description: 'Name of the Lease.',
  }),
  leaseDurationMs: duration({
    env: 'CM_LEASE_DURATION',
    flag: 'lease-duration',
    default: '15s',
    minimum: 1000,
    description: 'How long a lease is valid without renewal.',
  }),
  renewDeadlineMs: duration({
    env: 'CM_RENEW_DEADLINE',
    flag: 'renew-deadline',
    default: '10s',
    minimum: 500,
    description:
      'The leader stops acting when it could not renew for this long (a monotonic clock); a manager that creates the Lease acts only this long after.',
  }),
  retryPeriodMs: duration({
    env: 'CM_RETRY_PERIOD',
    flag: 'retry-period',
    default: '2s',
    minimum: 100,
    description: 'Interval of acquire and renew attempts.',
  }),
  identity: text({
    env: 'CM_IDENTITY',
    flag: 'identity',
    derived: true,
    description: 'Identity in the Lease; default: hostname and a random suffix.',
  }),
  rpcHost: text({
    env: 'CM_RPC_HOST',
    flag: 'rpc-host',
    derived: true,
    description: 'Address the control RPC listens on; default: $HOST, else 0.0.0.0.',
  }),
  rpcPort: integer({
    env: 'CM_RPC_PORT',
    flag: 'rpc-port',
    default: '8080',
    minimum: 0,
    maximum: 65535,
    description: 'Port of the control RPC (0 = any free port).',
  }),
  rpcToken: maybe(
    text({
      env: 'CM_RPC_TOKEN',
      flag: 'rpc-token',
      secret: true,
      description:
        'Bearer token required by every /v1 route of the control RPC, reads and mutations (or CM_RPC_TOKEN_FILE). Without one, /v1 is refused (401); /healthz, /readyz and /metrics stay open.',
    }),
  ),
  // The control RPC's connection limits (rpc/connection-cap.ts; issue 30 item 9).
  rpcMaxConnections: integer({
    env: 'CM_RPC_MAX_CONNECTIONS',
    flag: 'rpc-max-connections',
    default: '1024',
    // At least 64: up to 32 event streams and a long-polled departure per leaving pod hold their
    // connections with a request sent, and past the cap the newest is closed — a cap below that
    // cut the kubelet's /healthz probes (found in review: cap 1 and one stream).
    minimum: 64,
    maximum: 16384,
    description:
      "Connections the control RPC keeps at most (64 or more: event streams and waiting departures hold theirs, and a lower cap would refuse the kubelet's probes); past it the oldest one that has sent no request is closed (a warning says so). Keep it well below the pod's file-descriptor limit: 19,990 idle connections once stalled the control RPC ~50 s.",
  }),
  rpcHeadersTimeoutMs: duration({
    env: 'CM_RPC_HEADERS_TIMEOUT',
    flag: 'rpc-headers-timeout',
    default: '10s',
    minimum: 1000,
    maximum: 120000,
    description:
      "A control RPC request whose headers are not all in by then is answered 408 and closed (checked every second; Node's default is 60 s, and 0 would turn it off, so it is refused). A connection that sends nothing at all is closed by the connection cap instead.",
  }),
  logLevel: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    env: 'CM_LOG_LEVEL',
    flag: 'log-level',
    default: 'info',
    description: 'Log level.',
  }),
  shutdownTimeoutMs: duration({
    env: 'CM_SHUTDOWN_TIMEOUT',
    flag: 'shutdown-timeout',
    default: '10s',
    description: 'On SIGTERM, in-flight work gets this long before it is cancelled.',
  }),
});

/** The validated configuration (frozen). */
export type Config = Readonly<Static<typeof ConfigSchema>> & {
  /**
   * The selected chain's own settings by key, as its definition declares and reads them
   * (chain/registry.ts; Pocket V1's: chain/pocket/definition.ts). The core reads none of them.
   */
  readonly chainSettings: Readonly<Record<string, unknown>>;
  /**
   * A notice per setting given under its older name (a documented alias, e.g. CM_TX_MODE for
   * CM_POCKET_V1_TX_MODE): still read, logged as a warning at start (run.ts).
   */
  readonly deprecations: readonly string[];
};

/**
 * The core's settings: their environment variables, flags, kinds and defaults, read off the
 * schema. With each chain's own (`chainSettingsTables`) they are the reference documented in
 * docs/configuration.md (a test checks they agree).
 */
export const SETTINGS: readonly Setting<keyof Static<typeof ConfigSchema>>[] = settingsOf(
  ConfigSchema.properties,
);

/** Every registered chain with its settings, built in first (the flags of `run`, the docs). */
export function chainSettingsTables(): readonly ChainDefinition[] {
  return knownChains();
}

/** Every setting `run` takes: the core's, then each registered chain's. */
export function allSettings(): readonly Setting[] {
  return [...SETTINGS, ...knownChains().flatMap((chain) => chain.settings)];
}

/** Every problem found in the configuration, each naming its variable. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  env: NodeJS.ProcessEnv;
  /** Flag values by flag name (without dashes); they win over the environment. */
  flags?: Readonly<Record<string, string | undefined>>;
  /** Reads a file (tests override; used for CM_RPC_TOKEN_FILE and the service-account namespace). */
  readFile?: (path: string) => string | undefined;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function defaultReadFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Reads and validates every setting; throws one `ConfigError` listing all problems. */
export function loadConfig(options: LoadConfigOptions): Config {
  const readFile = options.readFile ?? defaultReadFile;
  const input: SettingsInput = { env: options.env, flags: options.flags };
  const { values, problems } = readSettings(SETTINGS, input);
  problems.push(...tokenProblems(values, options.env, readFile));
  problems.push(...combinedProblems(values));
  problems.push(...discoveryProblems(values));
  const chain = chainOf(values, input, problems);
  if (chain !== undefined) problems.push(...rangeProblems(values, chain.definition));
  if (problems.length > 0) throw new ConfigError(problems);

  values.namespace ??= readFile(SERVICE_ACCOUNT_NAMESPACE)?.trim() || undefined;
  values.identity ??= `${hostname()}-${randomBytes(4).toString('hex')}`;
  values.rpcHost ??=
    options.env.HOST !== undefined && options.env.HOST !== '' ? options.env.HOST : '0.0.0.0';
  values.chainSettings = Object.freeze(chain?.values ?? {});
  values.deprecations = Object.freeze(chain?.renamed ?? []);
  const config = Object.freeze(values);
  // Every value was parsed by its kind above: a mismatch here is a bug in this file (or in the
  // chain's definition), not a setting. The check is TypeBox's `Value.Check` without its 300
  // modules (config-check.ts, ADR 0020).
  const checks: [TObject, unknown, string][] = [[ConfigSchema, config, 'config.ts']];
  if (chain !== undefined)
    checks.push([chain.definition.schema, chain.values, chain.definition.name]);
  for (const [schema, object, where] of checks) {
    const first = firstSchemaError(schema, object);
    if (first !== undefined)
      throw new Error(
        `${where} built a value its schema refuses: ${first.instancePath} ${first.message}`,
      );
  }
  return config as unknown as Config;
}

/**
 * The chain CM_CHAIN names and its own settings, read like the core's; an unknown name is a
 * problem naming the known ones. A variable of another registered chain's namespace is refused
 * (it would silently do nothing); the older names (aliases) of other chains are not read at all.
 */
function chainOf(
  values: Record<string, unknown>,
  input: SettingsInput,
  problems: string[],
): { definition: ChainDefinition; values: Record<string, unknown>; renamed: string[] } | undefined {
  const name = typeof values.chain === 'string' ? values.chain : DEFAULT_CHAIN;
  const definition = chainNamed(name);
  if (definition === undefined) {
    const known = knownChains().map((chain) => chain.name);
    problems.push(
      `${input.flags?.chain === undefined ? 'CM_CHAIN' : '--chain'}: unknown chain ${JSON.stringify(name)}; known chains: ${known.join(', ')}`,
    );
    return undefined;
  }
  for (const other of knownChains())
    if (other !== definition)
      for (const setting of other.settings)
        if (input.env[setting.env] !== undefined || input.flags?.[setting.flag] !== undefined)
          problems.push(
            `${setting.env}: a setting of chain ${other.name}, but CM_CHAIN is ${definition.name}`,
          );
  const read = readSettings(definition.settings, input);
  problems.push(...read.problems, ...definition.problems(read.values, read.refused));
  return { definition, values: read.values, renamed: read.renamed };
}

/** Counts bounded by the chain's ids: there are no more validators than ids. */
function rangeProblems(values: Record<string, unknown>, chain: ChainDefinition): string[] {
  const { min, max } = chain.ids;
  const ids = max - min + 1;
  return typeof values.minValidators === 'number' && values.minValidators > ids
    ? [
        `CM_MIN_VALIDATORS: at most ${ids} (chain ${chain.name} has ids ${min} to ${max}), got ${values.minValidators}`,
      ]
    : [];
}

/** The token from CM_RPC_TOKEN_FILE when CM_RPC_TOKEN is unset, and its length. */
function tokenProblems(
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string | undefined,
): string[] {
  const problems: string[] = [];
  const tokenFile = env.CM_RPC_TOKEN_FILE;
  if (values.rpcToken === undefined && tokenFile !== undefined && tokenFile !== '') {
    const token = readFile(tokenFile)?.trim();
    if (token === undefined || token === '')
      problems.push(`CM_RPC_TOKEN_FILE: cannot read a token from ${tokenFile}`);
    else values.rpcToken = token;
  }
  if (typeof values.rpcToken === 'string' && values.rpcToken.length < 16) {
    problems.push('CM_RPC_TOKEN: must be at least 16 characters');
  }
  return problems;
}

/** Rules between core settings: the id pattern's group, the Lease's timing. */
function combinedProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (
    values.idMapping === IdMapping.pattern &&
    values.idPattern instanceof RegExp &&
    !/\((?!\?)/.test(values.idPattern.source)
  ) {
    problems.push('CM_ID_PATTERN: needs a capture group for the id, e.g. ^validator-(\\d+)-pocket');
  }
  if (
    typeof values.renewDeadlineMs === 'number' &&
    typeof values.leaseDurationMs === 'number' &&
    typeof values.retryPeriodMs === 'number' &&
    !(
      values.retryPeriodMs < values.renewDeadlineMs &&
      values.renewDeadlineMs < values.leaseDurationMs
    )
  ) {
    problems.push('CM_RETRY_PERIOD < CM_RENEW_DEADLINE < CM_LEASE_DURATION must hold');
  }
  return problems;
}

/** Static discovery needs both files, and no Lease (there is no cluster to hold one). */
function discoveryProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (values.discovery === 'static') {
    if (values.validatorsFile === undefined)
      problems.push('CM_VALIDATORS_FILE is required when CM_DISCOVERY is "static"');
    if (values.keysFile === undefined)
      problems.push('CM_KEYS_FILE is required when CM_DISCOVERY is "static"');
    if (values.leaderElection === true)
      problems.push(
        'CM_LEADER_ELECTION needs CM_DISCOVERY "kubernetes" (the Lease lives in the cluster); static discovery runs one manager',
      );
  }
  return problems;
}

/** The configuration as it may be logged: secrets replaced, regexes as source. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const chain = chainNamed(config.chain);
  return {
    ...redactedSettings(SETTINGS, config),
    chainSettings:
      chain === undefined ? {} : redactedSettings(chain.settings, config.chainSettings),
  };
}
