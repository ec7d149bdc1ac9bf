// `localnet-cli`: the subset of V1's `p1` CLI that the cluster-manager's CLI adapter and people
// used to p1 need, with p1's command names, flags, output and exit codes (docs/localnet-node.md).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import {
  editStakeMessage,
  signTransaction,
  stakeMessage,
  unpauseMessage,
  unstakeMessage,
  type PocketMessage,
  type ValidatorKey,
} from '../../pocket/index.ts';
import { findKey, importKey, parseRawKeyInput } from '../keybase.ts';
import {
  P1Error,
  printBroadcast,
  printQuery,
  printUnreachable,
  request,
  type Output,
} from './p1-io.ts';

/** p1's recommendation below which Stake and EditStake ask for confirmation (uPOKT). */
const STAKING_RECOMMENDATION = 15_100_000_000n;
const DEFAULT_REMOTE = 'http://localhost:50832';
const BOOLEAN_FLAGS = ['--non_interactive', '--verbose'];

export interface P1Environment {
  env: NodeJS.ProcessEnv;
  output: Output;
  /** Reads one line of stdin for p1's y/n prompt; `undefined` at EOF. */
  readLine: () => Promise<string | undefined>;
}

interface GlobalFlags {
  remote_cli_url?: string;
  data_dir?: string;
  non_interactive?: boolean;
}

/**
 * pflag accepts `--flag=true|false` for booleans; commander does not. Rewrites those forms and
 * rejects other values with pflag's text.
 */
export function normalizeBooleanFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    const [name, value] = arg.split('=', 2) as [string, string | undefined];
    if (value === undefined || !BOOLEAN_FLAGS.includes(name)) {
      out.push(arg);
      continue;
    }
    const normalized = value.toLowerCase();
    if (['1', 't', 'true'].includes(normalized)) out.push(name);
    else if (!['0', 'f', 'false'].includes(normalized)) {
      throw new P1Error(
        `invalid argument "${value}" for "${name}" flag: strconv.ParseBool: parsing "${value}": invalid syntax`,
      );
    }
  }
  return out;
}

export function createP1Program(environment: P1Environment): Command {
  const { output } = environment;
  const program = new Command('localnet-cli')
    .description('Pocket V1 p1-compatible CLI subset for the localnet (and the cluster-manager).')
    .option(
      '--remote_cli_url <url>',
      `RPC endpoint (env POCKET_REMOTE_CLI_URL, default ${DEFAULT_REMOTE})`,
    )
    .option('--non_interactive', 'skip prompts (passphrases are not used by this keybase)')
    .option(
      '--data_dir <dir>',
      'data directory; the keybase is <data_dir>/keys (default $HOME/.pocket)',
    )
    .option('--verbose', 'accepted for compatibility')
    .option('--config <file>', 'accepted for compatibility')
    .configureOutput({
      writeOut: (text) => output.out(text),
      writeErr: (text) => output.err(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'Error: ')),
    });
  const globals = (): GlobalFlags => program.opts<GlobalFlags>();
  const remote = (): string => {
    const flag = globals().remote_cli_url;
    if (flag !== undefined) return flag;
    const env = environment.env.POCKET_REMOTE_CLI_URL;
    return env === undefined || env === '' ? DEFAULT_REMOTE : env;
  };
  const dataDir = (): string => globals().data_dir ?? join(homedir(), '.pocket');
  const context: CommandContext = { environment, remote, dataDir };
  program.addCommand(validatorCommand(context));
  program.addCommand(keysCommand(context));
  program.addCommand(queryCommand(context));
  program.addCommand(debugCommand(context));
  return program;
}

interface CommandContext {
  environment: P1Environment;
  remote: () => string;
  dataDir: () => string;
}

/** cobra's `ExactArgs(n)`. */
function exactArgs(args: readonly string[], n: number): void {
  if (args.length !== n) throw new P1Error(`accepts ${n} arg(s), received ${args.length}`);
}

function command(name: string, aliases: string[], description: string): Command {
  return new Command(name).aliases(aliases).description(description);
}

// --- Validator -----------------------------------------------------------------------------

function validatorCommand(context: CommandContext): Command {
  const lookup = (address: string): ValidatorKey => {
    const key = findKey(context.dataDir(), address);
    if (key === undefined) throw new P1Error(`no key found with address: ${address}`);
    return key;
  };
  const broadcast = async (key: ValidatorKey, message: PocketMessage) => {
    const tx = signTransaction({ key, message });
    const answer = await request('POST', `${context.remote()}/v1/client/broadcast_tx_sync`, {
      body: { address: key.address, raw_hex_bytes: tx.hex },
    });
    printBroadcast(context.environment.output, answer);
  };
  const stakeLike = (name: 'Stake' | 'EditStake') =>
    command(name, [name.toLowerCase()], `${name} <fromAddr> <amount> <relayChainIDs> <serviceURI>`)
      .argument('[args...]')
      .option('--pwd <passphrase>', 'a non-empty value also skips the low-amount confirmation')
      .option('--keybase <type>', 'accepted for compatibility (file only)')
      .action(async (args: string[], flags: { pwd?: string }) => {
        exactArgs(args, 4);
        const [fromAddr, amount, rawChains, serviceUrl] = args as [string, string, string, string];
        const key = lookup(fromAddr);
        await confirmAmount(context.environment, amount, flags.pwd ?? '');
        const chains = rawChains.replace(/[^,a-fA-F0-9]+/g, '').split(',');
        await broadcast(
          key,
          name === 'Stake'
            ? stakeMessage({
                publicKey: key.publicKey,
                amount,
                chains,
                serviceUrl,
                outputAddress: key.addressBytes,
                signer: key.addressBytes,
              })
            : editStakeMessage({
                address: Uint8Array.from(Buffer.from(fromAddr, 'hex')),
                amount,
                chains,
                serviceUrl,
                signer: key.addressBytes,
              }),
        );
      });
  const addressOnly = (name: 'Unstake' | 'Unpause') =>
    command(name, [name.toLowerCase()], `${name} <fromAddr>`)
      .argument('[args...]')
      .option('--pwd <passphrase>', 'accepted for compatibility')
      .option('--keybase <type>', 'accepted for compatibility (file only)')
      .action(async (args: string[]) => {
        exactArgs(args, 1);
        const key = lookup(args[0] ?? '');
        const fields = { address: key.addressBytes, signer: key.addressBytes };
        await broadcast(key, name === 'Unstake' ? unstakeMessage(fields) : unpauseMessage(fields));
      });
  return command('Validator', ['validator', 'ACTOR_TYPE_VAL'], 'Validator actor specific commands')
    .addCommand(stakeLike('Stake'))
    .addCommand(stakeLike('EditStake'))
    .addCommand(addressOnly('Unstake'))
    .addCommand(addressOnly('Unpause'));
}

/**
 * p1's `validateStakeAmount`: below the recommendation it asks y/n on stdin, whatever
 * `--non_interactive` says; a non-empty `--pwd` skips the question. EOF or "no" aborts.
 */
async function confirmAmount(
  environment: P1Environment,
  amount: string,
  pwd: string,
): Promise<void> {
  if (!/^[+-]?\d+$/.test(amount)) {
    throw new P1Error(`error converting string to big int: ${JSON.stringify(amount)}`);
  }
  if (BigInt(amount) >= STAKING_RECOMMENDATION || pwd.trim() !== '') return;
  const { out } = environment.output;
  out(
    `The amount you are staking for is below the recommendation of ${STAKING_RECOMMENDATION / 1_000_000n} POKT, would you still like to continue? y|n\n`,
  );
  for (;;) {
    out('yes | no\n');
    const line = await environment.readLine();
    if (line === undefined) {
      out('Error reading string:  EOF\n');
      throw new P1Error('aborted');
    }
    const answer = line.trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') return;
    if (answer === 'n' || answer === 'no') throw new P1Error('aborted');
  }
}

// --- Keys ----------------------------------------------------------------------------------

function keysCommand(context: CommandContext): Command {
  const importCommand = command(
    'Import',
    ['import'],
    'Imports a key from a file (--input_file, "-" for stdin) into the keybase',
  )
    .argument('[privateKeyString]')
    .option('--input_file <file>', 'file holding the key (hex); "-" reads stdin')
    .option('--import_format <format>', 'raw (json is not supported here)', 'raw')
    .option('--pwd <passphrase>', 'accepted for compatibility (keys are stored unarmoured, 0600)')
    .option('--hint <hint>', 'accepted for compatibility')
    .action(
      (positional: string | undefined, flags: { input_file?: string; import_format: string }) => {
        if (positional !== undefined) {
          throw new P1Error(
            'a private key argument would be visible in the process list; use --input_file <file> (or - for stdin)',
          );
        }
        if (flags.input_file === undefined) throw new P1Error('no input file or argument provided');
        const format = flags.import_format.toLowerCase();
        if (format === 'json') {
          throw new P1Error(
            'import format json (an armoured key) is not supported by localnet-cli; use raw',
          );
        }
        if (format !== 'raw')
          throw new P1Error(`invalid import format: got ${flags.import_format}, want [raw]/[json]`);
        let text: string;
        try {
          text = readFileSync(flags.input_file === '-' ? 0 : flags.input_file, 'utf8');
        } catch {
          throw new P1Error(`open ${flags.input_file}: no such file or directory`);
        }
        let key: ValidatorKey;
        try {
          key = parseRawKeyInput(text);
        } catch (error: unknown) {
          throw new P1Error(error instanceof Error ? error.message : 'invalid private key');
        }
        const address = importKey(context.dataDir(), key);
        context.environment.output.out(`Key imported 📥: ${address}\n`);
      },
    );
  return command('Keys', ['keys'], 'Key specific commands').addCommand(importCommand);
}

// --- Query ---------------------------------------------------------------------------------

function queryCommand(context: CommandContext): Command {
  const query = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const url = context.remote();
    const { output } = context.environment;
    try {
      printQuery(
        output,
        await request(method, `${url}${path}`, body === undefined ? {} : { body }),
        url,
      );
    } catch (error: unknown) {
      if (!(error instanceof P1Error)) throw error;
      printUnreachable(output, url, error);
    }
  };
  const int = (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n))
      throw new P1Error(
        `invalid argument "${value}": strconv.ParseInt: parsing "${value}": invalid syntax`,
      );
    return n;
  };
  return command(
    'Query',
    ['query'],
    "Commands related to querying on-chain data via the node's RPC server",
  )
    .addCommand(
      command('Height', ['height'], 'Get current block height')
        .argument('[args...]')
        .action(async (args: string[]) => {
          exactArgs(args, 0);
          await query('GET', '/v1/query/height');
        }),
    )
    .addCommand(
      command('Validators', ['validators'], 'Get all the data of all validators')
        .argument('[args...]')
        .option('--height <n>', 'block height to query, (default = 0, latest)', '0')
        .option('--page <n>', 'page number to return of paginated query (default 1)', '1')
        .option('--per_page <n>', 'number of results per page (default 1000, max=1000)', '1000')
        .action(
          async (args: string[], flags: { height: string; page: string; per_page: string }) => {
            exactArgs(args, 0);
            await query('POST', '/v1/query/validators', {
              height: int(flags.height),
              page: int(flags.page),
              per_page: int(flags.per_page),
            });
          },
        ),
    )
    .addCommand(
      command('Validator', ['validator'], 'Get the validator data of an address')
        .argument('[args...]')
        .option('--height <n>', 'block height to query, (default = 0, latest)', '0')
        .action(async (args: string[], flags: { height: string }) => {
          exactArgs(args, 1);
          await query('POST', '/v1/query/validator', {
            address: args[0],
            height: int(flags.height),
          });
        }),
    )
    .addCommand(
      command('Transaction', ['tx'], 'Get the transaction data the hash provided')
        .argument('[args...]')
        .action(async (args: string[]) => {
          exactArgs(args, 1);
          await query('POST', '/v1/query/tx', { hash: args[0] });
        }),
    );
}

// --- Debug ---------------------------------------------------------------------------------

const SCALABLE_ACTORS = ['fishermen', 'full_nodes', 'servicers', 'validators'];

function debugCommand(context: CommandContext): Command {
  const debugAction = (name: string, aliases: string[], action: string, description: string) =>
    command(name, aliases, description)
      .argument('[args...]')
      .option(
        '--wait',
        'localnet extension: answer once the next height is committed (TriggerView)',
      )
      .action(async (args: string[], flags: { wait?: boolean }) => {
        exactArgs(args, 0);
        const url = context.remote();
        const query = flags.wait === true ? '?wait=true' : '';
        const answer = await request('POST', `${url}/v1/debug/${action}${query}`, { body: {} });
        // p1 fires debug messages and forgets them: silent unless something went wrong.
        if (answer.status !== 200) printQuery(context.environment.output, answer, url);
        else if (flags.wait === true) context.environment.output.out(answer.body);
      });
  const scale = command('ScaleActor', ['scale'], 'Scales the number of actors up or down')
    .argument('[args...]')
    .action(async (args: string[]) => {
      exactArgs(args, 2);
      const [actor, count] = args as [string, string];
      if (!SCALABLE_ACTORS.includes(actor)) throw new P1Error('Invalid actor type provided');
      if (actor !== 'validators') {
        throw new P1Error(
          `ScaleActor ${actor} is not supported: the cluster-manager scales validators only`,
        );
      }
      const replicas = Number(count);
      if (!Number.isInteger(replicas) || replicas < 0 || !/^\d+$/.test(count)) {
        throw new P1Error(`invalid number of validators: ${count}`);
      }
      const { env, output } = context.environment;
      const base =
        (env.CLUSTER_MANAGER_URL ?? '') === '' ? 'http://127.0.0.1:8080' : env.CLUSTER_MANAGER_URL;
      const token = env.CLUSTER_MANAGER_TOKEN ?? '';
      const answer = await request('POST', `${base}/v1/scale`, {
        body: { replicas },
        headers: token === '' ? {} : { authorization: `Bearer ${token}` },
      });
      output.out(answer.body.endsWith('\n') ? answer.body : `${answer.body}\n`);
      if (answer.status < 200 || answer.status > 299) {
        throw new P1Error(`the cluster-manager answered HTTP ${answer.status}`);
      }
    });
  return command('Debug', ['d'], 'Debug utility for rapid development')
    .addCommand(
      debugAction(
        'TriggerView',
        ['next', 'trigger', 'view'],
        'trigger_view',
        'Trigger the next view in consensus',
      ),
    )
    .addCommand(
      debugAction(
        'TogglePacemakerMode',
        ['toggle', 'pcm'],
        'toggle_pacemaker_mode',
        'Toggle the pacemaker',
      ),
    )
    .addCommand(
      debugAction('ResetToGenesis', ['reset', 'genesis'], 'reset_to_genesis', 'Reset to genesis'),
    )
    .addCommand(scale);
}

// --- running -------------------------------------------------------------------------------

/** Runs localnet-cli with p1's exit codes: 0 on success and on HTTP errors, 1 on `Error: …`. */
export async function runP1(argv: readonly string[], environment: P1Environment): Promise<number> {
  const program = createP1Program(environment);
  applyExitOverride(program);
  try {
    await program.parseAsync(normalizeBooleanFlags(argv.slice(2)), { from: 'user' });
    return 0;
  } catch (error: unknown) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    if (error instanceof P1Error) {
      environment.output.err(`Error: ${error.message}\n`);
      return 1;
    }
    const name = error instanceof Error ? error.name : typeof error;
    environment.output.err(`Error: unexpected ${name}\n`);
    return 1;
  }
}

function applyExitOverride(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) applyExitOverride(sub);
}

/** Line reader over the process's stdin (created lazily: most commands never read). */
export function stdinLines(): () => Promise<string | undefined> {
  let lines: AsyncIterator<string> | undefined;
  return async () => {
    lines ??= createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
    const next = await lines.next();
    return next.done === true ? undefined : next.value;
  };
}
