// Writes docs/configuration.md from SETTINGS, the manager's one list of core configuration keys,
// and the settings each built-in chain declares (`npm run docs:config`; `-- --check` exits 1
// when the file is stale; a test checks it too).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChainDefinition } from '../src/manager/chain/definition.ts';
import { BUILT_IN_CHAINS } from '../src/manager/chain/registry.ts';
import { SETTINGS, type Setting } from '../src/manager/config.ts';
import { idFormatOf } from '../src/manager/id-format.ts';

export const CONFIGURATION_DOC = 'docs/configuration.md';

/**
 * Variables that `loadConfig` reads besides SETTINGS, with what they do. Kept here so the
 * reference stays complete; a test checks that config.ts really reads each one.
 */
export const EXTRA_VARIABLES: readonly { env: string; description: string; example: string }[] = [
  {
    env: 'CM_RPC_TOKEN_FILE',
    description:
      'File holding the bearer token (trimmed), used when CM_RPC_TOKEN is not set; the manifests mount it from a Secret.',
    example: '/etc/cluster-manager/rpc-token/token',
  },
];

/** Examples where the default does not show the setting well, or there is no default. */
const EXAMPLES: Readonly<Record<string, string>> = {
  CM_VALIDATORS_FILE: '/etc/cluster-manager/validators.yaml',
  CM_KEYS_FILE: '/etc/cluster-manager/keys.yaml',
  CM_NAMESPACE: 'localnet',
  CM_ID_MAPPING: 'pattern',
  CM_KEYS_SECRET: 'validators-private-keys',
  CM_CHAIN_RPC_URL: 'http://pocket-validators:50832',
  CM_POCKET_V1_PROFILE: 'v1',
  CM_POCKET_V1_TX_MODE: 'cli',
  CM_POCKET_V1_CLI_PATH: '/usr/local/bin/p1',
  CM_POCKET_V1_CLI_TIMEOUT: '45s',
  CM_POCKET_V1_CLI_CONFIG_PATH: '/etc/pocket/config.json',
  CM_POCKET_V1_CLI_GENESIS_PATH: '/etc/pocket/genesis.json',
  CM_POCKET_V1_STAKE_AMOUNT: '200000000000upokt',
  CM_POCKET_V1_RELAY_CHAINS: '0001,0021',
  CM_SERVICE_URL_TEMPLATE: 'validator-{id}-pocket:42069',
  CM_NODE_RPC_PORT: '50832',
  CM_RESYNC_INTERVAL: '1m',
  CM_PACING: 'off',
  CM_JOURNAL_PATH: '/var/lib/cluster-manager/journal.sqlite',
  CM_HOOKS_FILE: '/etc/cluster-manager/hooks.yaml',
  CM_LEADER_ELECTION: 'true',
  CM_IDENTITY: 'cluster-manager-6d5f7c9b8-x2vqk',
  CM_RPC_HOST: '127.0.0.1',
  CM_RPC_TOKEN: '3f0c9a61d2e84b7f9c1e5a0b6d2f4c88',
  CM_LOG_LEVEL: 'debug',
};

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function code(text: string): string {
  return `\`${cell(text)}\``;
}

function kindText(setting: Setting): string {
  if (setting.kind.startsWith('enum:')) {
    return `one of ${setting.kind
      .slice('enum:'.length)
      .split('|')
      .map((value) => code(value))
      .join(', ')}`;
  }
  const range =
    setting.min !== undefined || setting.max !== undefined
      ? ` (${setting.min ?? '…'}–${setting.max ?? '…'}${setting.kind === 'duration' ? ' ms' : ''})`
      : '';
  const unit = setting.denomination === undefined ? '' : ` of ${code(setting.denomination)}`;
  return `${setting.kind}${unit}${range}`;
}

function exampleOf(setting: Setting): string {
  const example = EXAMPLES[setting.env] ?? setting.default;
  if (example === undefined) {
    throw new Error(
      `${setting.env} has neither a default nor an example in scripts/config-docs.ts`,
    );
  }
  return example;
}

function row(s: Setting): string[] {
  return [
    code(s.env),
    code(`--${s.flag}`),
    kindText(s),
    s.required === true ? '**required**' : s.default === undefined ? '–' : code(s.default),
    code(`${s.env}=${exampleOf(s)}`),
    `${cell(s.description)}${s.secret === true ? ' Never logged.' : ''}`,
  ];
}

function tableOf(rows: readonly (readonly string[])[]): string {
  return rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** One chain's section: what it is, its ids, and its settings with their older names. */
function chainSection(chain: ChainDefinition): string {
  const ids = idFormatOf(chain.ids);
  const aliases = chain.settings.flatMap(({ alias, env }) =>
    alias === undefined ? [] : [`${code(alias.env)} (\`--${alias.flag}\`) → ${code(env)}`],
  );
  return `### \`${chain.name}\`

${chain.summary} Validator ids: ${code(ids.fromNumber(ids.range.min) ?? '')} … ${code(
    ids.fromNumber(ids.range.max) ?? '',
  )} (\`GET /v1/chain\` serves the format). Its own error codes: ${chain.errors
    .map((e) => code(e.code))
    .join(', ')} ([operations.md](operations.md#error-codes)).

| Variable | Flag | Type | Default | Example | Description |
|---|---|---|---|---|---|
${tableOf(chain.settings.map(row))}

Older names, still read when the new one is unset (a new name and its alias set to different
values is refused): ${aliases.join('; ')}.
`;
}

/** The whole reference, as docs/configuration.md holds it. */
export function renderConfigurationDoc(
  settings: readonly Setting[] = SETTINGS,
  chains: readonly ChainDefinition[] = BUILT_IN_CHAINS,
): string {
  const extraRows = EXTRA_VARIABLES.map((v) => [
    code(v.env),
    '–',
    'path',
    '–',
    code(`${v.env}=${v.example}`),
    cell(v.description),
  ]);
  const table = tableOf([...settings.map(row), ...extraRows]);
  return `<!-- Generated by \`npm run docs:config\` from SETTINGS in src/manager/config.ts and the built-in chains' definitions (src/manager/chain/registry.ts). Do not edit: change the tables there and regenerate. -->

# Configuration reference

\`cluster-manager run\` reads its configuration once, at start: every setting comes from a flag
(\`--chain-rpc-url …\`, which wins) or an environment variable (\`CM_CHAIN_RPC_URL=…\`), else its
default. Every value is checked against its type; all problems are reported together, each
naming its variable, and the process exits with code 2. The accepted configuration is logged
once, with secrets replaced by \`(set)\`.

In the cluster the variables come from the ConfigMap \`cluster-manager-config\`
(\`k8s/base/cluster-manager/config.env\`, merged by the overlays) and the Deployment's \`env\`;
see [tilt.md](tilt.md) and [pocket-v1-localnet.md](pocket-v1-localnet.md).

- **Durations** are a number with a unit: \`250ms\`, \`30s\`, \`2m\`, \`1h\` (a bare number is
  milliseconds). Ranges below are in milliseconds.
- **Booleans** are \`true\`/\`false\` (also \`1\`/\`0\`, \`yes\`/\`no\`).
- **Lists** are comma-separated.
- **Amounts** are a whole number of the chain's smallest unit, bare or followed by its name
  (\`150000000001\` or \`150000000001upokt\`); another unit is refused.
- Also checked together: \`CM_CHAIN\` names a registered chain (an unknown name is refused,
  naming the known ones), and a variable of another chain's namespace is refused;
  \`CM_VALIDATORS_FILE\` and \`CM_KEYS_FILE\` are required, and \`CM_LEADER_ELECTION\` must be
  off, when \`CM_DISCOVERY=static\`; \`CM_POCKET_V1_CLI_PATH\` is required when
  \`CM_POCKET_V1_TX_MODE=cli\`; \`CM_ID_PATTERN\` needs a capture group; \`CM_RETRY_PERIOD\` <
  \`CM_RENEW_DEADLINE\` < \`CM_LEASE_DURATION\`; a token has at least 16 characters.

| Variable | Flag | Type | Default | Example | Description |
|---|---|---|---|---|---|
${table}

## Chains

\`CM_CHAIN\` selects the chain; each chain declares its own settings, named after it
(\`CM_<NAME>_…\`, \`--<name>-…\`), and only the selected chain's are read. A build may register
more chains (see [architecture.md](architecture.md#the-chain-registry)).

${chains.map(chainSection).join('\n')}
## Service URL placeholders

\`CM_SERVICE_URL_TEMPLATE\` is filled per validator pod: \`{pod}\` (pod name), \`{service}\` (the
StatefulSet's governing Service), \`{namespace}\`, \`{statefulset}\`, \`{ordinal}\`, \`{id}\` (the
validator id, \`005\`), \`{podIP}\` and \`{port:NAME}\` (a container port by name or number). A
validator whose URL cannot be filled is reported as failed rather than staked with a wrong URL.
`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const path = fileURLToPath(new URL(`../${CONFIGURATION_DOC}`, import.meta.url));
  const fresh = renderConfigurationDoc();
  if (process.argv.includes('--check')) {
    const current = readFileSync(path, 'utf8');
    if (current !== fresh) {
      process.stderr.write(`${CONFIGURATION_DOC} is stale; run \`npm run docs:config\`\n`);
      process.exitCode = 1;
    } else process.stdout.write(`${CONFIGURATION_DOC} is current\n`);
  } else {
    writeFileSync(path, fresh);
    process.stdout.write(`wrote ${CONFIGURATION_DOC}\n`);
  }
}
