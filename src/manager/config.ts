// The manager's configuration: read once from the environment (and flags), every variable checked
// against its schema, all problems reported together by name, then a frozen typed object.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Type, type Static, type TSchema } from 'typebox';
import { firstSchemaError } from './config-check.ts';
import { maskUrlCredentials } from './url-credentials.ts';

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

/** How a setting's text is read (and shown in docs/configuration.md). */
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

/** Where a setting comes from and how it is documented; kept on its schema under `x-source`. */
interface Source {
  env: string;
  flag: string;
  description: string;
  /** The text used when neither the flag nor the variable is set. */
  default?: string;
  required?: boolean;
  /** Never logged, never echoed in an error. */
  secret?: boolean;
  /** Unset, the loader derives it (so the value is never undefined). */
  derived?: boolean;
  minimum?: number;
  maximum?: number;
}

/** One row of the settings table: the schema's annotations, flattened (docs, flags, parsing). */
export interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  default?: string;
  required?: boolean;
  secret?: boolean;
  min?: number;
  max?: number;
  description: string;
}

const SOURCE = 'x-source';
type Annotated = { [SOURCE]: Source & { kind: Kind } };

function annotate(kind: Kind, source: Source): Annotated & { description: string } {
  const range = { minimum: source.minimum, maximum: source.maximum };
  return {
    [SOURCE]: { ...source, kind },
    description: source.description,
    ...Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined)),
  };
}

const text = (source: Source) => Type.String(annotate('string', source));
const path = (source: Source) => Type.String(annotate('path', source));
const url = (source: Source) => Type.String(annotate('url', source));
/** A positive whole number of the chain's smallest unit, kept as text (it passes 2^53). */
const amount = (source: Source) => Type.String(annotate('amount', source));
const integer = (source: Source) => Type.Integer(annotate('int', source));
/** Milliseconds, written as `500ms`, `30s`, `2m`, `1h` or a bare number of ms. */
const duration = (source: Source) => Type.Integer(annotate('duration', source));
const boolean = (source: Source) => Type.Boolean(annotate('bool', source));
/** A RegExp instance: JSON Schema has no such type, so a refinement checks it (`Value.Check`, config-check.ts). */
const regex = (source: Source) =>
  Type.Refine(Type.Unsafe<RegExp>(annotate('regex', source)), (value) => value instanceof RegExp);
const list = (source: Source) =>
  Type.Unsafe<readonly string[]>(Type.Array(Type.String(), annotate('list', source)));
/** `auto`, or a whole number up to `maximum`. */
const size = (source: Source) =>
  Type.Union(
    [
      Type.Integer({
        minimum: 0,
        ...(source.maximum === undefined ? {} : { maximum: source.maximum }),
      }),
      Type.Literal('auto'),
    ],
    annotate('size', source),
  );
const oneOf = <const V extends readonly string[]>(values: V, source: Source) =>
  Type.Unsafe<V[number]>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      annotate(`enum:${values.join('|')}`, source),
    ),
  );
/** A setting with no default: undefined when unset. */
const maybe = <T extends TSchema>(schema: T) =>
  Type.Union([schema, Type.Undefined()], { [SOURCE]: (schema as unknown as Annotated)[SOURCE] });

/**
 * The manager's configuration, declared once: each property's schema gives its type (`Config`),
 * its validation (the check at the end of `loadConfig`, config-check.ts), and, in its `x-source` annotation,
 * its environment variable, flag, text form, default and description (SETTINGS, the flags of
 * `cluster-manager run`, and docs/configuration.md, which a test checks against it). Durations
 * are milliseconds. Key order is the order of the reference.
 */
export const ConfigSchema = Type.Object({
  discovery: oneOf(['kubernetes', 'static'] as const, {
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
      'How a pod maps to a validator id: StatefulSet ordinal + 1 (three digits), a name pattern, or an annotation.',
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
  chainRpcUrl: url({
    env: 'CM_CHAIN_RPC_URL',
    flag: 'chain-rpc-url',
    required: true,
    description: "The chain's RPC (queries always go here; RPC mode also broadcasts here).",
  }),
  chainProfile: oneOf(['intended', 'v1'] as const, {
    env: 'CM_CHAIN_PROFILE',
    flag: 'chain-profile',
    default: 'intended',
    description:
      'What the chain can do. intended: late joiners sync and vote, an unstaked row leaves the quorum, views by the debug RPC route. v1: Pocket V1 as its code runs (no state sync for late joiners, every row ever staked counts in the quorum, views by a debug message to each validator).',
  }),
  txMode: oneOf(['rpc', 'cli'] as const, {
    env: 'CM_TX_MODE',
    flag: 'tx-mode',
    default: 'rpc',
    description: 'Send transactions by signing them here (rpc) or through the node CLI (cli).',
  }),
  cliPath: maybe(
    path({
      env: 'CM_CLI_PATH',
      flag: 'cli-path',
      description: 'Absolute path of the node CLI (p1 or localnet-cli); required in cli mode.',
    }),
  ),
  cliTimeoutMs: duration({
    env: 'CM_CLI_TIMEOUT',
    flag: 'cli-timeout',
    default: '30s',
    description: 'Time limit of one CLI call; it is then terminated (SIGKILL 2 s later).',
  }),
  cliConfigPath: maybe(
    path({
      env: 'CM_CLI_CONFIG_PATH',
      flag: 'cli-config-path',
      description:
        "Node config file given to the CLI as CONFIG_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
    }),
  ),
  cliGenesisPath: maybe(
    path({
      env: 'CM_CLI_GENESIS_PATH',
      flag: 'cli-genesis-path',
      description:
        "Genesis file given to the CLI as GENESIS_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
    }),
  ),
  stakeAmount: amount({
    env: 'CM_STAKE_AMOUNT',
    flag: 'stake-amount',
    default: '150000000001',
    description: 'Stake amount in uPOKT.',
  }),
  stakeChains: list({
    env: 'CM_STAKE_CHAINS',
    flag: 'stake-chains',
    default: '0001',
    description: 'Comma-separated relay chain ids put in stake transactions.',
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
    maximum: 999,
    description:
      'The manager never unstakes below this many staked validators (scale 0 stops pods, not the chain); auto: a quorum (> 2/3) of the genesis set. A forced scale lowers it.',
  }),
  concurrency: integer({
    env: 'CM_CONCURRENCY',
    flag: 'concurrency',
    default: '32',
    minimum: 1,
    maximum: 256,
    description:
      'Validators reconciled at once. The actions prepared together share one journal commit (fsync); CLI mode runs at most 8 CLI processes at once whatever this is.',
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
export type Config = Readonly<Static<typeof ConfigSchema>>;

/**
 * Every setting: its environment variable, its flag, its kind and default, read off the schema.
 * The table is the reference documented in docs/configuration.md (a test checks they agree).
 */
export const SETTINGS: readonly Setting[] = Object.entries(ConfigSchema.properties).map(
  ([key, schema]) => {
    const { kind, env, flag, description, ...source } = (schema as unknown as Annotated)[SOURCE];
    return {
      key: key as keyof Config,
      env,
      flag,
      kind,
      ...(source.default === undefined ? {} : { default: source.default }),
      ...(source.required === true ? { required: true } : {}),
      ...(source.secret === true ? { secret: true } : {}),
      ...(source.minimum === undefined ? {} : { min: source.minimum }),
      ...(source.maximum === undefined ? {} : { max: source.maximum }),
      description,
    };
  },
);

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
  const config = Object.freeze(values);
  // Every value was parsed by its kind above: a mismatch here is a bug in this file, not a setting.
  // The check is TypeBox's `Value.Check` without its 300 modules (config-check.ts, ADR 0020).
  const first = firstSchemaError(ConfigSchema, config);
  if (first !== undefined)
    throw new Error(
      `config.ts built a value its schema refuses: ${first.instancePath} ${first.message}`,
    );
  return config as Config;
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
      // A password in a URL would show in the log, in /readyz's lastError and in every chain
      // error: it is refused, and never echoed (what sits between `//` and `@` is masked).
      const masked = setting.secret === true ? shown : JSON.stringify(maskUrlCredentials(raw));
      try {
        const url = new URL(raw);
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          return { problem: `expected an http(s) URL, got ${masked}` };
        if (url.username !== '' || url.password !== '')
          return {
            problem: `a URL with credentials (user:password@) is refused, got ${masked}: they would be shown in logs and /readyz`,
          };
        return url.href.replace(/\/+$/, '');
      } catch {
        return { problem: `expected an http(s) URL, got ${masked}` };
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
