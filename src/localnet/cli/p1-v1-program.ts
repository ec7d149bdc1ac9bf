// localnet-cli's v1 mode: `p1` as V1's code builds it (app/client/cli/*.go at 58c9b650) on the
// cobra emulation, for the commands the cluster-manager and V1's e2e steps use: `help`,
// `Validator Stake|EditStake|Unstake|Unpause`, `Account Send`, `Keys Import`, `Query …`,
// `Debug …`. Same names, flags, help texts, output and exit codes: `Error: …` and the usage on
// stderr, then p1's `main` logs the failure on stdout and exits 1 (app/client/main.go:21-23);
// `HTTP status code: N` and the body with exit 0 on HTTP errors (actor.go:146-147). Commands
// of p1 that localnet-cli does not implement are listed (so `help` reads as p1's) and refuse to
// run.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  editStakeMessage,
  sendMessage,
  signTransaction,
  stakeMessage,
  unpauseMessage,
  unstakeMessage,
  type PocketMessage,
  type ValidatorKey,
} from '../../pocket/index.ts';
import { goHexDecode } from '../go-format.ts';
import { findKey, importKey, parseRawKeyInput } from '../keybase.ts';
import {
  CobraCommand,
  CobraError,
  execute,
  exactArgs,
  helpCommand,
  maximumNArgs,
  type CommandDef,
  type FlagDef,
  type RunContext,
} from './cobra.ts';
import type { P1Environment } from './p1-context.ts';
import { P1Error, printBroadcast, printQuery, printUnreachable, request } from './p1-io.ts';
import { readDevnetEndpoints } from './devnet-file.ts';
import { loadConfig, v1DebugCommand } from './p1-v1-debug.ts';
import { GoFatal, logFatal, zerologFatal, zerologLine } from './p1-v1-output.ts';
import { confirmAmount } from './p1-validator.ts';

const DEFAULT_REMOTE = 'http://localhost:50832';

const str = (name: string, usage: string, def = ''): FlagDef => ({
  name,
  type: 'string',
  default: def,
  usage,
});
const int = (name: string, usage: string, def: number): FlagDef => ({
  name,
  type: 'int64',
  default: def,
  usage,
});

/** cmd.go:22-41. */
const rootFlags = (home: string): FlagDef[] => [
  str(
    'remote_cli_url',
    'takes a remote endpoint in the form of <protocol>://<host>:<port> (uses RPC Port)',
    DEFAULT_REMOTE,
  ),
  {
    name: 'non_interactive',
    type: 'bool',
    default: false,
    usage:
      'if true skips the interactive prompts wherever possible (useful for scripting & automation)',
  },
  str('data_dir', 'Path to store pocket related data (keybase etc.)', join(home, '.pocket')),
  str('config', 'Path to config'),
  { name: 'verbose', type: 'bool', default: false, usage: 'Show verbose output' },
];

/** utils.go:194-197, 273-278. */
const KEYBASE_FLAGS: FlagDef[] = [
  str('keybase', 'keybase type used by the cmd, options are: file, vault'),
  str(
    'vault-addr',
    'Vault address used by the cmd. Defaults to https://127.0.0.1:8200 or VAULT_ADDR env var',
  ),
  str('vault-token', 'Vault token used by the cmd. Defaults to VAULT_TOKEN env var'),
  str('vault-mount', 'Vault mount path used by the cmd. Defaults to secret'),
];
const PWD = str('pwd', 'passphrase used by the cmd, non empty usage bypass interactive prompt');
const HEIGHT = int('height', 'block height to query, (default = 0, latest)', 0);
const PAGE = int('page', 'page number to return of paginated query (default 1)', 1);
const PER_PAGE = int(
  'per_page',
  'number of results to show per page in a paginated query (default 1000, max=1000)',
  1000,
);
const SORT = str('sort', "order to sort results in  ('asc' or default 'desc')", 'desc');

/** A p1 command localnet-cli does not implement: listed for `help`, refused when run. */
const unsupported = (use: string, short: string, aliases: string[] = []): CommandDef => ({
  use,
  short,
  aliases,
  run: ({ command }) => {
    throw new CobraError(`${command.path} is not supported by localnet-cli`);
  },
});

interface QueryDef {
  use: string;
  short: string;
  long: string;
  aliases: string[];
  args: number;
  method: 'GET' | 'POST';
  path: string;
  flags: FlagDef[];
  body?: (args: readonly string[], flags: RunContext['flags']) => unknown;
}

const h = (f: RunContext['flags']) => f.get('height');
const paged = (f: RunContext['flags']) => ({ page: f.get('page'), per_page: f.get('per_page') });
const obtains = (what: string) =>
  `Queries the node RPC to obtain the ${what} at the given (or latest if unspecified) height`;

/** query.go:64-905, in its order. */
const QUERIES: QueryDef[] = [
  ...(
    [
      [
        'Account',
        'account',
        'Get the account data of an address',
        'account data of the speicifed account',
        '/v1/query/account',
      ],
      [
        'App',
        'app',
        'Get the app data of an address',
        'app data of the speicifed address',
        '/v1/query/app',
      ],
      [
        'Balance',
        'balance',
        'Get the balance of an address',
        'balance of the account',
        '/v1/query/balance',
      ],
      [
        'Fisherman',
        'fisherman',
        'Get the fisherman data of an address',
        'fisherman data of the speicifed address',
        '/v1/query/fisherman',
      ],
      [
        'Servicer',
        'servicer',
        'Get the servicer data of an address',
        'servicer data of the speicifed address',
        '/v1/query/servicer',
      ],
      [
        'Validator',
        'validator',
        'Get the validator data of an address',
        'validator data of the speicifed address',
        '/v1/query/validator',
      ],
    ] as const
  ).map(([name, alias, short, what, path]): QueryDef => ({
    use: `${name} <address> [--height]`,
    short,
    long: obtains(what),
    aliases: [alias],
    args: 1,
    method: 'POST',
    path,
    flags: [HEIGHT],
    body: (args, f) => ({ address: args[0], height: h(f) }),
  })),
  ...(
    [
      ['Block', 'block', 'Get the block data', 'block data', '/v1/query/block'],
      [
        'Supply',
        'supply',
        'Get the token supply data from each pool',
        'token supply data of the pools',
        '/v1/query/supply',
      ],
      [
        'SupportedChains',
        'supportedchains',
        'Get the supported chains',
        'supported chains',
        '/v1/query/supported_chains',
      ],
    ] as const
  ).map(([name, alias, short, what, path]): QueryDef => ({
    use: `${name} [--height]`,
    short,
    long: obtains(what),
    aliases: [alias],
    args: 0,
    method: 'POST',
    path,
    flags: [HEIGHT],
    body: (_args, f) => ({ height: h(f) }),
  })),
  {
    use: 'Param <parameter_name> [--height]',
    short: 'Get the value of the parameter',
    long: obtains('value of the specified parameter'),
    aliases: ['param'],
    args: 1,
    method: 'POST',
    path: '/v1/query/param',
    flags: [HEIGHT],
    body: (args, f) => ({ param_name: args[0], height: h(f) }),
  },
  {
    use: 'Upgrade [--height]',
    short: 'Get the upgrade version',
    long: 'Queries the node RPC to obtain the upgrade version for the given (or latest if unspecified) height',
    aliases: ['param'],
    args: 0,
    method: 'POST',
    path: '/v1/query/upgrade',
    flags: [HEIGHT],
    body: (_args, f) => ({ height: h(f) }),
  },
  ...(
    [
      [
        'Accounts',
        'accounts',
        'Get the account data of all accounts',
        'all accounts',
        '/v1/query/accounts',
      ],
      ['Apps', 'apps', 'Get all the data of all apps', 'all apps', '/v1/query/apps'],
      [
        'Fishermen',
        'fishermen',
        'Get all the data of all fishermen',
        'all fishermen',
        '/v1/query/fishermen',
      ],
      [
        'Servicers',
        'servicers',
        'Get all the data of all servicers',
        'all servicers',
        '/v1/query/servicers',
      ],
      [
        'Validators',
        'validators',
        'Get all the data of all validators',
        'all validators',
        '/v1/query/validators',
      ],
    ] as const
  ).map(([name, alias, short, what, path]): QueryDef => ({
    use: `${name} [--height] [--page] [--per_page]`,
    short,
    long: obtains(`paginated data for ${what}`),
    aliases: [alias],
    args: 0,
    method: 'POST',
    path,
    flags: [HEIGHT, PAGE, PER_PAGE],
    body: (_args, f) => ({ height: h(f), ...paged(f) }),
  })),
  {
    use: 'BlockTxs [--height] [--page] [--per_page] [--sort]',
    short: 'Get all the transactions in the block',
    long: obtains('paginated transactions in the block'),
    aliases: ['blocktxs'],
    args: 0,
    method: 'POST',
    path: '/v1/query/block_txs',
    flags: [HEIGHT, PAGE, PER_PAGE, SORT],
    body: (_args, f) => ({ height: h(f), ...paged(f), sort: f.get('sort') }),
  },
  {
    use: 'AccountTxs <address> [--page] [--per_page] [--sort]',
    short: 'Get all the transaction data of the given address',
    long: 'Queries the node RPC to obtain the paginated data for all transactions from the given address',
    aliases: ['accounttxs'],
    args: 1,
    method: 'POST',
    path: '/v1/query/account_txs',
    flags: [PAGE, PER_PAGE, SORT],
    body: (args, f) => ({ address: args[0], ...paged(f), sort: f.get('sort') }),
  },
  {
    use: 'UnconfirmedTxs [--page] [--per_page] [--sort]',
    short: 'Get all the unconfirmed transaction data from the mempool',
    long: 'Queries the node RPC to obtain the paginated data for all unconfirmed transactions from the mempool',
    aliases: ['unconfirmedtxs'],
    args: 0,
    method: 'POST',
    path: '/v1/query/unconfirmed_txs',
    flags: [PAGE, PER_PAGE, SORT],
    body: (_args, f) => ({ ...paged(f), sort: f.get('sort') }),
  },
  {
    use: 'AllChainParams',
    short: 'Get current values of all node parameters',
    long: 'Queries the node RPC to obtain the current values of all the governance parameters',
    aliases: ['allparams'],
    args: 0,
    method: 'GET',
    path: '/v1/query/all_chain_params',
    flags: [],
  },
  {
    use: 'Height',
    short: 'Get current block height',
    long: 'Queries the node RPC to obtain the current block height',
    aliases: ['height'],
    args: 0,
    method: 'GET',
    path: '/v1/query/height',
    flags: [],
  },
  {
    use: 'Transaction <hash>',
    short: 'Get the transaction data the hash provided',
    long: 'Queries the node RPC to obtain the transaction data for the specified hash',
    aliases: ['tx'],
    args: 1,
    method: 'POST',
    path: '/v1/query/tx',
    flags: [],
    body: (args) => ({ hash: args[0] }),
  },
  {
    use: 'UnconfirmedTransaction <hash>',
    short: 'Get the unconfirmed transaction data the hash provided',
    long: 'Queries the node RPC to obtain the unconfirmed transaction data for the specified hash, from the mempool',
    aliases: ['unconfirmedtx'],
    args: 1,
    method: 'POST',
    path: '/v1/query/unconfirmed_tx',
    flags: [],
    body: (args) => ({ hash: args[0] }),
  },
  {
    use: 'NodeRoles',
    short: 'Get current the node roles',
    long: 'Queries the node RPC to returns the type of utility actor(s) running on the node',
    aliases: ['noderoles'],
    args: 0,
    method: 'POST',
    path: '/v1/query/nodeRoles',
    flags: [],
  },
];

export interface V1ProgramOptions {
  environment: P1Environment;
}

/** Builds p1's command tree. */
export function createV1Program(options: V1ProgramOptions): CobraCommand {
  const { environment } = options;
  const home = environment.env.HOME ?? homedir();
  const actions = v1Actions(environment);
  const root = new CobraCommand({
    use: 'p1',
    short: 'Pocket Network Command Line Interface (CLI)',
    long: 'The CLI is meant to be an user but also a machine friendly way for interacting with Pocket Network.',
    persistentFlags: rootFlags(home),
    // cmd.go:48-54: `--config`, when given, must be a readable config file.
    persistentPreRun: (run) => {
      const config = String(run.flags.get('config'));
      if (config !== '') loadConfig(config);
    },
    children: [
      accountCommand(actions),
      unsupported('Application', 'Application actor specific commands', [
        'application',
        'ACTOR_TYPE_APP',
      ]),
      unsupported('Consensus', 'Consensus specific commands', ['consensus']),
      v1DebugCommand({ environment, remote: actions.remote }),
      unsupported('DebugUI', 'Debug utility with an interactive UI for development purposes', [
        'dui',
        'debug',
      ]),
      unsupported('Fisherman', 'Fisherman actor specific commands', [
        'fisherman',
        'ACTOR_TYPE_FISH',
      ]),
      unsupported('Governance', 'Governance specific commands', ['gov']),
      keysCommand(actions),
      unsupported('Node', 'Commands related to node management and operations', ['node', 'n']),
      {
        use: 'Query',
        short: "Commands related to querying on-chain data via the node's RPC server",
        aliases: ['query'],
        args: exactArgs(0),
        children: QUERIES.map((def) => queryCommand(actions, def)),
      },
      unsupported('Servicer', 'Servicer specific commands', ['servicer']),
      unsupported('System', 'Commands related to health and troubleshooting of the node instance', [
        'sys',
      ]),
      validatorCommand(actions),
      unsupported('completion', 'Generate the autocompletion script for the specified shell'),
      helpCommand(),
    ],
  });
  return root;
}

/** What p1's commands share: where the node is, the keybase, and how a transaction is sent. */
interface V1Actions {
  output: P1Environment['output'];
  remote: (run: RunContext, config?: Record<string, unknown>) => string;
  dataDir: (run: RunContext) => string;
  readPassphrase: (run: RunContext, pwd: string) => void;
  keyFor: (run: RunContext, address: string) => ValidatorKey;
  broadcast: (run: RunContext, key: ValidatorKey, message: PocketMessage) => Promise<void>;
  addressBytes: (text: string) => Uint8Array;
  pwdOf: (run: RunContext) => string;
  confirm: (amount: string, pwd: string) => Promise<void>;
}

function v1Actions(environment: P1Environment): V1Actions {
  const { output } = environment;
  /**
   * viper's order (cmd.go:51-52): `--remote_cli_url` (even empty) > `POCKET_REMOTE_CLI_URL` >
   * the config file's `remote_cli_url` > the default.
   */
  const remote = (run: RunContext, config?: Record<string, unknown>): string => {
    if (run.changed.has('remote_cli_url')) return String(run.flags.get('remote_cli_url'));
    const env = environment.env.POCKET_REMOTE_CLI_URL;
    if (env !== undefined) return env;
    const fromConfig = config?.remote_cli_url;
    if (typeof fromConfig === 'string') return fromConfig;
    // localnet: a devnet in the working folder (.devnet/devnet.json) before V1's default.
    try {
      const devnet = readDevnetEndpoints(undefined, environment.cwd ?? process.cwd());
      return devnet.chainRpcUrl ?? DEFAULT_REMOTE;
    } catch (error: unknown) {
      if (error instanceof P1Error) throw new CobraError(error.message);
      throw error;
    }
  };
  const dataDir = (run: RunContext): string => String(run.flags.get('data_dir'));

  /** utils.go:150-168: p1 reads a passphrase from the terminal unless `--pwd` is given. */
  const readPassphrase = (run: RunContext, pwd: string): void => {
    if (run.flags.get('non_interactive') === true) return;
    if (pwd.trim() !== '') {
      output.out('Using Passphrase provided via flag\n');
      return;
    }
    output.out('Enter Passphrase: \n');
    // term.ReadPassword on a stdin that is not a terminal (utils.go:63-66).
    throw zerologFatal('failed to read password', 'inappropriate ioctl for device');
  };
  const keyFor = (run: RunContext, address: string): ValidatorKey => {
    readPassphrase(run, pwdOf(run));
    const key = findKey(dataDir(run), address);
    if (key === undefined) throw new CobraError(`no key found with address: ${address}`);
    return key;
  };
  const broadcast = async (
    run: RunContext,
    key: ValidatorKey,
    message: PocketMessage,
  ): Promise<void> => {
    const tx = signTransaction({ key, message });
    try {
      const answer = await request('POST', `${remote(run)}/v1/client/broadcast_tx_sync`, {
        body: { address: key.address, raw_hex_bytes: tx.hex },
      });
      printBroadcast(output, answer);
    } catch (error: unknown) {
      if (error instanceof P1Error) throw new CobraError(error.message);
      throw error;
    }
  };
  /** `crypto.AddressFromString` (shared/crypto/keys.go:58-64): bad hex is a log.Fatal. */
  const addressBytes = (text: string): Uint8Array => {
    const bytes = goHexDecode(text);
    if (typeof bytes === 'string') {
      throw logFatal(`Should never fail on decoding an address from string: ${bytes}`);
    }
    return bytes;
  };
  const pwdOf = (run: RunContext): string => String(run.flags.get('pwd') ?? '');
  /** utils.go:170-184 `validateStakeAmount` (num_utils.go:13-20 for a non-number). */
  const confirm = async (amount: string, pwd: string): Promise<void> => {
    if (!/^[+-]?\d+$/.test(amount)) throw new CobraError('unable to SetString() with base 10');
    try {
      await confirmAmount(environment, amount, pwd);
    } catch (error: unknown) {
      if (error instanceof P1Error) throw new CobraError(error.message);
      throw error;
    }
  };

  return {
    output,
    remote,
    dataDir,
    readPassphrase,
    keyFor,
    broadcast,
    addressBytes,
    pwdOf,
    confirm,
  };
}

/** `Account Send`: the one account command. */
function accountCommand(actions: V1Actions): CommandDef {
  const { addressBytes, keyFor, broadcast } = actions;
  return {
    use: 'Account',
    short: 'Account specific commands',
    aliases: ['account'],
    args: exactArgs(0),
    children: [
      {
        use: 'Send <fromAddr> <to> <amount>',
        short: 'Send <fromAddr> <to> <amount>',
        long: 'Sends <amount> to address <to> from address <fromAddr>',
        aliases: ['send'],
        args: exactArgs(3),
        flags: [...KEYBASE_FLAGS, PWD],
        run: async (run) => {
          const [from, to, amount] = run.args as [string, string, string];
          const fromAddress = addressBytes(from);
          const toAddress = addressBytes(to);
          const key = keyFor(run, from);
          await broadcast(run, key, sendMessage({ fromAddress, toAddress, amount }));
        },
      },
    ],
  };
}

/** `Keys`: only Import is supported (from a file or stdin, never argv). */
function keysCommand(actions: V1Actions): CommandDef {
  return {
    use: 'Keys',
    short: 'Key specific commands',
    aliases: ['keys'],
    args: exactArgs(0),
    children: [
      unsupported('Create', 'Create new key', ['create']),
      unsupported(
        'Update <addrHex> [--pwd] [--new_pwd] [--hint]',
        'Updates the key to have a new passphrase and hint',
        ['update'],
      ),
      unsupported('Delete <addrHex>', 'Deletes the key from the keybase', ['delete']),
      unsupported('List', 'List all keys', ['list']),
      unsupported('Get <addrHex>', 'Get the address and public key from the keybase', ['get']),
      unsupported(
        'Export <addrHex> [--export_format] [--output_file]',
        'Exports the private key as a raw string or JSON to either STDOUT or to a file',
        ['export'],
      ),
      importKeyCommand(actions),
      unsupported('Sign <addrHex> <messageHex>', 'Signs a message using the key provided', [
        'sign',
      ]),
      unsupported(
        'Verify <addrHex> <messageHex> <signatureHex>',
        'Verifies the signature is valid from the signer',
        ['verify'],
      ),
      unsupported(
        'SignTx <addrHex> [--input_file] [--output_file]',
        'Signs a transaction using the key provided',
        ['signtx'],
      ),
      unsupported(
        'VerifyTx <addrHex> [--input_file]',
        "Verifies the transaction's signature is valid from the signer",
        ['verifytx'],
      ),
      unsupported(
        'DeriveChild <parentAddrHex> <index>',
        'Derive the child key at the given index from a parent key',
        ['derivechild'],
      ),
    ],
  };
}

/** `Validator`: Stake, EditStake, Unstake and Unpause, each a signed transaction. */
function validatorCommand(actions: V1Actions): CommandDef {
  const { keyFor, confirm, broadcast, pwdOf, addressBytes } = actions;
  const actorFlags = [PWD, ...KEYBASE_FLAGS];
  const stake: CommandDef = {
    use: 'Stake <fromAddr> <amount> <relayChainIDs> <serviceURI>',
    short:
      'Stake a Validator in the network. Custodial stake uses the same address as operator/output for rewards/return of staked funds.',
    long: `Stake the Validator into the network, making it available for service.

Will prompt the user for the *fromAddr* account passphrase. If the Validator is already staked, this transaction acts as an *update* transaction.

A Validator can update relayChainIDs, serviceURI, and raise the stake amount with this transaction.

If the Validator is currently staked at X and you submit an update with new stake Y. Only Y-X will be subtracted from an account.

If no changes are desired for the parameter, just enter the current param value just as before.`,
    args: exactArgs(4),
    flags: actorFlags,
    run: async (run) => {
      const [from, amount, chains, serviceUrl] = run.args as [string, string, string, string];
      const key = keyFor(run, from);
      await confirm(amount, pwdOf(run));
      await broadcast(
        run,
        key,
        stakeMessage({
          publicKey: key.publicKey,
          amount,
          chains: chains.replace(/[^,a-fA-F0-9]+/g, '').split(','),
          serviceUrl,
          outputAddress: key.addressBytes,
          signer: key.addressBytes,
        }),
      );
    },
  };
  const editStake: CommandDef = {
    use: 'EditStake <fromAddr> <amount> <relayChainIDs> <serviceURI>',
    short: 'EditStake <fromAddr> <amount> <relayChainIDs> <serviceURI>',
    long: 'Stakes a new <amount> for the Validator actor with address <fromAddr> for the specified <relayChainIDs> and <serviceURI>.',
    args: exactArgs(4),
    flags: actorFlags,
    run: async (run) => {
      const [from, amount, chains, serviceUrl] = run.args as [string, string, string, string];
      const address = addressBytes(from);
      const key = keyFor(run, from);
      await confirm(amount, pwdOf(run));
      await broadcast(
        run,
        key,
        editStakeMessage({
          address,
          amount,
          chains: chains.replace(/[^,a-fA-F0-9]+/g, '').split(','),
          serviceUrl,
          signer: key.addressBytes,
        }),
      );
    },
  };
  const addressOnly = (name: 'Unstake' | 'Unpause', long: string): CommandDef => ({
    use: `${name} <fromAddr>`,
    short: `${name} <fromAddr>`,
    long,
    args: exactArgs(1),
    flags: actorFlags,
    run: async (run) => {
      const key = keyFor(run, run.args[0] ?? '');
      const fields = { address: key.addressBytes, signer: key.addressBytes };
      await broadcast(
        run,
        key,
        name === 'Unstake' ? unstakeMessage(fields) : unpauseMessage(fields),
      );
    },
  });

  return {
    use: 'Validator',
    short: 'Validator actor specific commands',
    aliases: ['validator', 'ACTOR_TYPE_VAL'],
    args: exactArgs(0),
    children: [
      stake,
      editStake,
      addressOnly(
        'Unstake',
        'Unstakes the previously staked tokens for the Validator actor with address <fromAddr>',
      ),
      addressOnly('Unpause', 'Unpauses the Validator actor with address <fromAddr>'),
    ],
  };
}

/** One `Query` command: its request to the node's RPC, printed as p1 prints it. */
function queryCommand(actions: V1Actions, def: QueryDef): CommandDef {
  const { remote, output } = actions;
  return {
    use: def.use,
    short: def.short,
    long: def.long,
    aliases: def.aliases,
    args: exactArgs(def.args),
    flags: def.flags,
    run: async (run) => {
      const url = remote(run);
      try {
        const body = def.body?.(run.args, run.flags);
        printQuery(
          output,
          await request(def.method, `${url}${def.path}`, body === undefined ? {} : { body }),
          url,
        );
      } catch (error: unknown) {
        if (!(error instanceof P1Error)) throw error;
        printUnreachable(output, url, error);
      }
    },
  };
}

/** `Keys Import`: a raw private key from `--input_file` (or `-`, stdin) into the keybase. */
function importKeyCommand(actions: V1Actions): CommandDef {
  const { readPassphrase, pwdOf, output, dataDir } = actions;
  return {
    use: 'Import [privateKeyString] [--input_file] [--import_format]',
    short: 'Imports a key from a string or from a file',
    long: 'Imports [privateKeyString] or from [--input_file] into the keybase, provided it is in the form of [--import_format]',
    aliases: ['import'],
    args: maximumNArgs(1),
    flags: [
      PWD,
      str('hint', 'hint for the passphrase of the private key'),
      str('input_file', 'input file to read data from'),
      str('import_format', 'import the private key from the specified format', 'raw'),
      ...KEYBASE_FLAGS,
    ],
    run: (run) => {
      if (run.args.length === 1) {
        throw new CobraError(
          'a private key argument would be visible in the process list; use --input_file <file> (or - for stdin)',
        );
      }
      const file = String(run.flags.get('input_file'));
      if (file === '') throw new CobraError('no input file or argument provided');
      let text: string;
      try {
        text = readInput(file);
      } catch {
        throw new CobraError(`open ${file}: no such file or directory`);
      }
      readPassphrase(run, pwdOf(run));
      const format = String(run.flags.get('import_format')).toLowerCase();
      if (format === 'json') {
        throw new CobraError(
          'import format json (an armoured key) is not supported by localnet-cli; use raw',
        );
      }
      if (format !== 'raw') {
        // keys.go:380 prints the export format's value here.
        throw new CobraError('invalid import format: got json, want [raw]/[json]');
      }
      let key: ValidatorKey;
      try {
        key = parseRawKeyInput(text);
      } catch (error: unknown) {
        throw new CobraError(error instanceof Error ? error.message : 'invalid private key');
      }
      output.out(`Key imported 📥: ${importKey(dataDir(run), key)}\n`);
    },
  };
}

/** `utils.ReadInput`: a file, or stdin for `-`. */
function readInput(file: string): string {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

const DEBUG_KEYBASE_LINE =
  'Debug keybase initializing... Restoring from the embedded backup file...';

/**
 * Runs p1's command line and prints as p1 does. Returns the exit code: 0, or 1 after a failure
 * (cobra's `Error:` and usage on stderr, then `main`'s fatal log line on stdout).
 */
export async function runV1(argv: readonly string[], options: V1ProgramOptions): Promise<number> {
  const { output } = options.environment;
  // A debug-built p1 (the LocalNet's: build/localnet/Tiltfile:98, `go build -tags=debug`) restores
  // its debug keybase in an `init()` before `main`, on every call, and says so on stdout
  // (app/client/debug.go:1-7, app/client/keybase/debug/keystore.go:24-35, 61).
  output.out(zerologLine('debug', DEBUG_KEYBASE_LINE));
  const root = createV1Program(options);
  try {
    const outcome = await execute(root, argv);
    switch (outcome.kind) {
      case 'ok':
        return 0;
      case 'help':
        output.out(outcome.text);
        return 0;
      case 'unknown':
        output.err(`Error: ${outcome.message}\nRun '${outcome.path} --help' for usage.\n`);
        output.out(zerologLine('fatal', 'failed to execute command', outcome.message));
        return 1;
      case 'error':
        output.err(`Error: ${outcome.message}\n${outcome.usage}\n`);
        output.out(zerologLine('fatal', 'failed to execute command', outcome.message));
        return 1;
    }
  } catch (error: unknown) {
    if (error instanceof GoFatal) {
      if (error.stdout !== '') output.out(error.stdout);
      if (error.stderr !== '') output.err(error.stderr);
      return 1;
    }
    throw error;
  }
}
