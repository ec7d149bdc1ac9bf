// The manager's configuration: read once from the environment (and flags), every variable checked
// against its schema, all problems reported together by name, then a frozen typed object.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Pacing } from './model.ts';

export { Pacing } from './model.ts';

/** How a pod maps to the validator id that names its key in the Secret. */
export const IdMapping = {
  ordinal: 'ordinal',
  pattern: 'pattern',
  annotation: 'annotation',
} as const;
export type IdMapping = (typeof IdMapping)[keyof typeof IdMapping];

export const TxMode = { rpc: 'rpc', cli: 'cli' } as const;
export type TxMode = (typeof TxMode)[keyof typeof TxMode];

/** Which chain the manager talks to, as far as its capabilities go (chain/capabilities.ts). */
export const ChainProfile = { intended: 'intended', v1: 'v1' } as const;
export type ChainProfile = (typeof ChainProfile)[keyof typeof ChainProfile];

/** Where the desired validators and their keys come from (discovery/port.ts). */
export const Discovery = { kubernetes: 'kubernetes', static: 'static' } as const;
export type Discovery = (typeof Discovery)[keyof typeof Discovery];

export const LogLevel = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LogLevel)[number];

/** The validated configuration. Durations are milliseconds. */
export interface Config {
  readonly discovery: Discovery;
  readonly validatorsFile: string | undefined;
  readonly keysFile: string | undefined;
  readonly namespace: string | undefined;
  readonly podSelector: string;
  readonly idMapping: IdMapping;
  readonly idPattern: RegExp;
  readonly idAnnotation: string;
  readonly keysSecret: string;
  readonly chainRpcUrl: string;
  readonly chainProfile: ChainProfile;
  readonly txMode: TxMode;
  readonly cliPath: string | undefined;
  readonly cliTimeoutMs: number;
  readonly cliConfigPath: string | undefined;
  readonly cliGenesisPath: string | undefined;
  readonly stakeAmount: string;
  readonly stakeChains: readonly string[];
  readonly serviceUrlTemplate: string;
  readonly nodeRpcPortName: string;
  readonly resyncIntervalMs: number;
  readonly chainPollIntervalMs: number;
  readonly readyDebounceMs: number;
  readonly syncTolerance: number;
  readonly syncCheck: boolean;
  readonly pacing: Pacing;
  /** The fewest staked validators the manager keeps: a number, or `auto` (a quorum of genesis). */
  readonly minValidators: number | 'auto';
  readonly concurrency: number;
  readonly journalPath: string;
  readonly hooksFile: string | undefined;
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly identity: string;
  readonly rpcHost: string;
  readonly rpcPort: number;
  readonly rpcToken: string | undefined;
  readonly logLevel: LogLevel;
  readonly shutdownTimeoutMs: number;
}

type Kind =
  | 'string'
  | 'int'
  | 'duration'
  | 'bool'
  | 'url'
  | 'path'
  | 'regex'
  | 'amount'
  | 'list'
  | 'size'
  | `enum:${string}`;

interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  default?: string;
  required?: boolean;
  /** Never logged, never echoed in an error. */
  secret?: boolean;
  min?: number;
  max?: number;
  description: string;
}

/**
 * Every setting: its environment variable, its flag, its kind and default. The table is the
 * reference documented in docs/configuration.md (a test checks they agree).
 */
export const SETTINGS: readonly Setting[] = [
  {
    key: 'discovery',
    env: 'CM_DISCOVERY',
    flag: 'discovery',
    kind: 'enum:kubernetes|static',
    default: 'kubernetes',
    description:
      'Where the validators come from. kubernetes: pods, StatefulSets and the keys Secret. static: a validators file and a keys file, no cluster (see docs/static-discovery.md).',
  },
  {
    key: 'validatorsFile',
    env: 'CM_VALIDATORS_FILE',
    flag: 'validators-file',
    kind: 'path',
    description:
      'Static discovery: YAML or JSON file listing the wanted validators ({validators: [{id, rpc, serviceUrl, hold}]}); watched, so editing it stakes and unstakes.',
  },
  {
    key: 'keysFile',
    env: 'CM_KEYS_FILE',
    flag: 'keys-file',
    kind: 'path',
    description:
      "Static discovery: the validators' keys, as a Secret manifest (keys generate) or a map of id to key; watched. Refused when users other than its owner may read it (chmod 600).",
  },
  {
    key: 'namespace',
    env: 'CM_NAMESPACE',
    flag: 'namespace',
    kind: 'string',
    description:
      'Namespace of the validators; default: the service account\'s, else the kubeconfig context\'s, else "default".',
  },
  {
    key: 'podSelector',
    env: 'CM_POD_SELECTOR',
    flag: 'pod-selector',
    kind: 'string',
    default: 'pokt.network/purpose=validator',
    description: 'Label selector of the validator pods.',
  },
  {
    key: 'idMapping',
    env: 'CM_ID_MAPPING',
    flag: 'id-mapping',
    kind: 'enum:ordinal|pattern|annotation',
    default: 'ordinal',
    description:
      'How a pod maps to a validator id: StatefulSet ordinal + 1 (three digits), a name pattern, or an annotation.',
  },
  {
    key: 'idPattern',
    env: 'CM_ID_PATTERN',
    flag: 'id-pattern',
    kind: 'regex',
    default: '^validator-(\\d+)-pocket',
    description:
      'With id mapping "pattern": a regular expression on the pod name whose first group is the id.',
  },
  {
    key: 'idAnnotation',
    env: 'CM_ID_ANNOTATION',
    flag: 'id-annotation',
    kind: 'string',
    default: 'cluster-manager.dev/validator-id',
    description: 'With id mapping "annotation": the pod annotation holding the id.',
  },
  {
    key: 'keysSecret',
    env: 'CM_KEYS_SECRET',
    flag: 'keys-secret',
    kind: 'string',
    default: 'validators-private-keys',
    description: 'Secret holding the validators\' private keys, keyed by id ("001").',
  },
  {
    key: 'chainRpcUrl',
    env: 'CM_CHAIN_RPC_URL',
    flag: 'chain-rpc-url',
    kind: 'url',
    required: true,
    description: "The chain's RPC (queries always go here; RPC mode also broadcasts here).",
  },
  {
    key: 'chainProfile',
    env: 'CM_CHAIN_PROFILE',
    flag: 'chain-profile',
    kind: 'enum:intended|v1',
    default: 'intended',
    description:
      'What the chain can do. intended: late joiners sync and vote, an unstaked row leaves the quorum, views by the debug RPC route. v1: Pocket V1 as its code runs (no state sync for late joiners, every row ever staked counts in the quorum, views by a debug message to each validator).',
  },
  {
    key: 'txMode',
    env: 'CM_TX_MODE',
    flag: 'tx-mode',
    kind: 'enum:rpc|cli',
    default: 'rpc',
    description: 'Send transactions by signing them here (rpc) or through the node CLI (cli).',
  },
  {
    key: 'cliPath',
    env: 'CM_CLI_PATH',
    flag: 'cli-path',
    kind: 'path',
    description: 'Absolute path of the node CLI (p1 or localnet-cli); required in cli mode.',
  },
  {
    key: 'cliTimeoutMs',
    env: 'CM_CLI_TIMEOUT',
    flag: 'cli-timeout',
    kind: 'duration',
    default: '30s',
    description: 'Time limit of one CLI call; it is then terminated (SIGKILL 2 s later).',
  },
  {
    key: 'cliConfigPath',
    env: 'CM_CLI_CONFIG_PATH',
    flag: 'cli-config-path',
    kind: 'path',
    description:
      "Node config file given to the CLI as CONFIG_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
  },
  {
    key: 'cliGenesisPath',
    env: 'CM_CLI_GENESIS_PATH',
    flag: 'cli-genesis-path',
    kind: 'path',
    description:
      "Genesis file given to the CLI as GENESIS_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
  },
  {
    key: 'stakeAmount',
    env: 'CM_STAKE_AMOUNT',
    flag: 'stake-amount',
    kind: 'amount',
    default: '150000000001',
    description: 'Stake amount in uPOKT.',
  },
  {
    key: 'stakeChains',
    env: 'CM_STAKE_CHAINS',
    flag: 'stake-chains',
    kind: 'list',
    default: '0001',
    description: 'Comma-separated relay chain ids put in stake transactions.',
  },
  {
    key: 'serviceUrlTemplate',
    env: 'CM_SERVICE_URL_TEMPLATE',
    flag: 'service-url-template',
    kind: 'string',
    default: '{pod}.{service}.{namespace}.svc.cluster.local:42069',
    description:
      'Service URL staked for a validator; placeholders {pod} {service} {namespace} {statefulset} {ordinal} {id} {podIP} {port:NAME}.',
  },
  {
    key: 'nodeRpcPortName',
    env: 'CM_NODE_RPC_PORT',
    flag: 'node-rpc-port',
    kind: 'string',
    default: 'rpc',
    description:
      "Name (or number) of the container port of a node's own RPC, asked for its height before staking.",
  },
  {
    key: 'resyncIntervalMs',
    env: 'CM_RESYNC_INTERVAL',
    flag: 'resync-interval',
    kind: 'duration',
    default: '30s',
    min: 1_000,
    description: 'Every validator is reconciled again at this interval.',
  },
  {
    key: 'chainPollIntervalMs',
    env: 'CM_CHAIN_POLL_INTERVAL',
    flag: 'chain-poll-interval',
    kind: 'duration',
    default: '500ms',
    min: 50,
    description: 'How often the chain height is read.',
  },
  {
    key: 'readyDebounceMs',
    env: 'CM_READY_DEBOUNCE',
    flag: 'ready-debounce',
    kind: 'duration',
    default: '2s',
    description:
      'A pod that has flapped (lost readiness, or a container restarted) must stay Ready this long before its validator is staked; a pod in its first Ready spell is staked at once.',
  },
  {
    key: 'syncTolerance',
    env: 'CM_SYNC_TOLERANCE',
    flag: 'sync-tolerance',
    kind: 'int',
    default: '1',
    min: 0,
    max: 1000,
    description:
      "A node counts as synced when its height is within this many blocks of the chain's.",
  },
  {
    key: 'syncCheck',
    env: 'CM_SYNC_CHECK',
    flag: 'sync-check',
    kind: 'bool',
    default: 'true',
    description: "Ask a validator's own node for its height before staking it.",
  },
  {
    key: 'pacing',
    env: 'CM_PACING',
    flag: 'pacing',
    kind: 'enum:bft|off',
    default: 'bft',
    description: 'bft: fewer than half the proven set may join at a time; off: no limit.',
  },
  {
    key: 'minValidators',
    env: 'CM_MIN_VALIDATORS',
    flag: 'min-validators',
    kind: 'size',
    default: 'auto',
    max: 999,
    description:
      'The manager never unstakes below this many staked validators (scale 0 stops pods, not the chain); auto: a quorum (> 2/3) of the genesis set. A forced scale lowers it.',
  },
  {
    key: 'concurrency',
    env: 'CM_CONCURRENCY',
    flag: 'concurrency',
    kind: 'int',
    default: '8',
    min: 1,
    max: 256,
    description: 'Validators reconciled at once.',
  },
  {
    key: 'journalPath',
    env: 'CM_JOURNAL_PATH',
    flag: 'journal',
    kind: 'path',
    default: 'cluster-manager-journal.sqlite',
    description: 'SQLite file of the action journal (must survive restarts).',
  },
  {
    key: 'hooksFile',
    env: 'CM_HOOKS_FILE',
    flag: 'hooks-file',
    kind: 'path',
    description:
      'YAML or JSON file of lifecycle hooks (pre-stake, post-stake, pre-unstake, post-unstake, readiness); see docs/hooks.md. Refused when others may write it.',
  },
  {
    key: 'leaderElection',
    env: 'CM_LEADER_ELECTION',
    flag: 'leader-election',
    kind: 'bool',
    default: 'false',
    description: 'Elect a leader through a coordination.k8s.io Lease; only the leader acts.',
  },
  {
    key: 'leaseName',
    env: 'CM_LEASE_NAME',
    flag: 'lease-name',
    kind: 'string',
    default: 'cluster-manager',
    description: 'Name of the Lease.',
  },
  {
    key: 'leaseDurationMs',
    env: 'CM_LEASE_DURATION',
    flag: 'lease-duration',
    kind: 'duration',
    default: '15s',
    min: 1_000,
    description: 'How long a lease is valid without renewal.',
  },
  {
    key: 'renewDeadlineMs',
    env: 'CM_RENEW_DEADLINE',
    flag: 'renew-deadline',
    kind: 'duration',
    default: '10s',
    min: 500,
    description: 'The leader steps down when it could not renew for this long.',
  },
  {
    key: 'retryPeriodMs',
    env: 'CM_RETRY_PERIOD',
    flag: 'retry-period',
    kind: 'duration',
    default: '2s',
    min: 100,
    description: 'Interval of acquire and renew attempts.',
  },
  {
    key: 'identity',
    env: 'CM_IDENTITY',
    flag: 'identity',
    kind: 'string',
    description: 'Identity in the Lease; default: hostname and a random suffix.',
  },
  {
    key: 'rpcHost',
    env: 'CM_RPC_HOST',
    flag: 'rpc-host',
    kind: 'string',
    description: 'Address the control RPC listens on; default: $HOST, else 0.0.0.0.',
  },
  {
    key: 'rpcPort',
    env: 'CM_RPC_PORT',
    flag: 'rpc-port',
    kind: 'int',
    default: '8080',
    min: 0,
    max: 65_535,
    description: 'Port of the control RPC (0 = any free port).',
  },
  {
    key: 'rpcToken',
    env: 'CM_RPC_TOKEN',
    flag: 'rpc-token',
    kind: 'string',
    secret: true,
    description:
      'Bearer token required by mutating control RPC calls (or CM_RPC_TOKEN_FILE). Without one, mutations are refused.',
  },
  {
    key: 'logLevel',
    env: 'CM_LOG_LEVEL',
    flag: 'log-level',
    kind: 'enum:fatal|error|warn|info|debug|trace|silent',
    default: 'info',
    description: 'Log level.',
  },
  {
    key: 'shutdownTimeoutMs',
    env: 'CM_SHUTDOWN_TIMEOUT',
    flag: 'shutdown-timeout',
    kind: 'duration',
    default: '10s',
    description: 'On SIGTERM, in-flight work gets this long before it is cancelled.',
  },
];

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
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const fromFlag = options.flags?.[setting.flag];
    const raw = fromFlag ?? options.env[setting.env] ?? setting.default;
    const name = fromFlag === undefined ? setting.env : `--${setting.flag}`;
    if (raw === undefined || raw === '') {
      if (setting.required === true)
        problems.push(`${setting.env} is required: ${setting.description}`);
      values[setting.key] = undefined;
      continue;
    }
    const parsed = parseValue(setting, raw);
    if (typeof parsed === 'object' && 'problem' in parsed) {
      problems.push(`${name}: ${parsed.problem}`);
    } else {
      values[setting.key] = parsed;
    }
  }

  const tokenFile = options.env.CM_RPC_TOKEN_FILE;
  if (values.rpcToken === undefined && tokenFile !== undefined && tokenFile !== '') {
    const token = readFile(tokenFile)?.trim();
    if (token === undefined || token === '')
      problems.push(`CM_RPC_TOKEN_FILE: cannot read a token from ${tokenFile}`);
    else values.rpcToken = token;
  }
  if (typeof values.rpcToken === 'string' && values.rpcToken.length < 16) {
    problems.push('CM_RPC_TOKEN: must be at least 16 characters');
  }
  if (
    values.txMode === TxMode.cli &&
    values.cliPath === undefined &&
    !problems.some((p) => p.startsWith('CM_CLI_PATH') || p.startsWith('--cli-path'))
  ) {
    problems.push(
      'CM_CLI_PATH is required when CM_TX_MODE is "cli" (absolute path of the node CLI)',
    );
  }
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
  problems.push(...discoveryProblems(values));
  if (problems.length > 0) throw new ConfigError(problems);

  values.namespace ??= readFile(SERVICE_ACCOUNT_NAMESPACE)?.trim() || undefined;
  values.identity ??= `${hostname()}-${randomBytes(4).toString('hex')}`;
  values.rpcHost ??=
    options.env.HOST !== undefined && options.env.HOST !== '' ? options.env.HOST : '0.0.0.0';
  return Object.freeze(values) as unknown as Config;
}

/** Static discovery needs both files, and no Lease (there is no cluster to hold one). */
function discoveryProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (values.discovery === Discovery.static) {
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

type Parsed = string | number | boolean | RegExp | readonly string[] | { problem: string };

function parseValue(setting: Setting, raw: string): Parsed {
  const shown = setting.secret === true ? '(hidden)' : JSON.stringify(raw);
  switch (true) {
    case setting.kind === 'string':
      return raw;
    case setting.kind === 'int': {
      if (!/^-?\d+$/.test(raw)) return { problem: `expected an integer, got ${shown}` };
      return checkRange(setting, Number(raw), shown);
    }
    case setting.kind === 'duration': {
      const ms = parseDuration(raw);
      if (ms === undefined)
        return { problem: `expected a duration such as 500ms, 30s or 2m, got ${shown}` };
      return checkRange(setting, ms, shown);
    }
    case setting.kind === 'bool':
      if (['true', '1', 'yes'].includes(raw)) return true;
      if (['false', '0', 'no'].includes(raw)) return false;
      return { problem: `expected true or false, got ${shown}` };
    case setting.kind === 'url': {
      try {
        const url = new URL(raw);
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          return { problem: `expected an http(s) URL, got ${shown}` };
        return url.href.replace(/\/+$/, '');
      } catch {
        return { problem: `expected an http(s) URL, got ${shown}` };
      }
    }
    case setting.kind === 'path':
      // The CLI runs in a private temporary folder: its files must be absolute paths.
      if (setting.key.startsWith('cli') && !raw.startsWith('/'))
        return { problem: `expected an absolute path, got ${shown}` };
      return raw;
    case setting.kind === 'regex':
      try {
        return new RegExp(raw);
      } catch {
        return { problem: `expected a regular expression, got ${shown}` };
      }
    case setting.kind === 'amount':
      if (!/^[1-9]\d*$/.test(raw))
        return { problem: `expected a positive integer amount of uPOKT, got ${shown}` };
      return raw;
    case setting.kind === 'size':
      if (raw === 'auto') return raw;
      if (!/^\d+$/.test(raw)) return { problem: `expected "auto" or a whole number, got ${shown}` };
      return checkRange(setting, Number(raw), shown);
    case setting.kind === 'list': {
      const items = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      if (items.length === 0) return { problem: `expected a comma-separated list, got ${shown}` };
      return items;
    }
    default: {
      const allowed = setting.kind.slice('enum:'.length).split('|');
      if (!allowed.includes(raw))
        return { problem: `expected one of ${allowed.join(', ')}, got ${shown}` };
      return raw;
    }
  }
}

function checkRange(setting: Setting, value: number, shown: string): Parsed {
  if (setting.min !== undefined && value < setting.min)
    return { problem: `must be at least ${setting.min}, got ${shown}` };
  if (setting.max !== undefined && value > setting.max)
    return { problem: `must be at most ${setting.max}, got ${shown}` };
  return value;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Parses "250ms", "30s", "2m", "1h" (or a bare number of milliseconds). */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match?.[1] === undefined) return undefined;
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1));
}

/** The configuration as it may be logged: secrets replaced, regexes as source. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const value = config[setting.key];
    out[setting.key] =
      setting.secret === true && value !== undefined
        ? '(set)'
        : value instanceof RegExp
          ? value.source
          : value;
  }
  return out;
}
