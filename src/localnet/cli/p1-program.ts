// `localnet-cli`: the subset of V1's `p1` CLI that the cluster-manager's CLI adapter and people
// used to p1 need, with p1's command names, flags, output and exit codes (docs/localnet-node.md).
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import type { CommandContext, P1Environment } from './p1-context.ts';
import { readDevnetEndpoints } from './devnet-file.ts';
import { debugCommand } from './p1-debug.ts';
import { P1Error } from './p1-io.ts';
import { keysCommand } from './p1-keys.ts';
import { runV1 } from './p1-v1-program.ts';
import { queryCommand } from './p1-query.ts';
import { validatorCommand } from './p1-validator.ts';

const DEFAULT_REMOTE = 'http://localhost:50832';
const BOOLEAN_FLAGS = ['--non_interactive', '--verbose'];

export type { P1Environment };

interface GlobalFlags {
  remote_cli_url?: string;
  data_dir?: string;
  non_interactive?: boolean;
  devnet?: string;
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
      `RPC endpoint (env POCKET_REMOTE_CLI_URL, else the chain of .devnet/devnet.json, else ${DEFAULT_REMOTE})`,
    )
    .option(
      '--devnet <dir>',
      'localnet extension: the devnet folder whose devnet.json gives the chain and manager URLs (default .devnet)',
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
  const devnet = () => readDevnetEndpoints(globals().devnet, environment.cwd ?? process.cwd());
  /** flag (even empty) > POCKET_REMOTE_CLI_URL > the devnet's chain > V1's default. */
  const remote = (): string => {
    const flag = globals().remote_cli_url;
    if (flag !== undefined) return flag;
    const env = environment.env.POCKET_REMOTE_CLI_URL;
    if (env !== undefined && env !== '') return env;
    return devnet().chainRpcUrl ?? DEFAULT_REMOTE;
  };
  const dataDir = (): string => globals().data_dir ?? join(homedir(), '.pocket');
  const context: CommandContext = { environment, remote, dataDir, devnet };
  program.addCommand(validatorCommand(context));
  program.addCommand(keysCommand(context));
  program.addCommand(queryCommand(context));
  program.addCommand(debugCommand(context));
  return program;
}

// --- running -------------------------------------------------------------------------------

/**
 * The v1 mode (p1 as V1's code builds it: cobra's help, usage after errors, V1's debug messages
 * and config files) is chosen by `LOCALNET_FIDELITY=v1` or by running the CLI under the name
 * `p1` (a symlink).
 */
export function isV1Mode(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const name = basename(argv[1] ?? '').replace(/\.[cm]?[jt]s$/, '');
  return env.LOCALNET_FIDELITY === 'v1' || name === 'p1';
}

/** Runs localnet-cli with p1's exit codes: 0 on success and on HTTP errors, 1 on `Error: …`. */
export async function runP1(argv: readonly string[], environment: P1Environment): Promise<number> {
  if (isV1Mode(argv, environment.env)) return runV1(argv.slice(2), { environment });
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
