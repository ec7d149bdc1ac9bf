// `cluster-manager devnet`: starts the embedded devnet, prints `devnet ready` with its endpoints,
// shows the validators' status until SIGINT/SIGTERM, then stops everything it started.
import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_DEVNET_DIR, nearestDevnetDir, readDevnetInfo } from '../cli/devnet-file.ts';
import { devnetStateOf, notRunningReason } from '../cli/devnet-lock-file.ts';
import { CliError, examples, ExitCode } from '../cli/program.ts';
import type { Devnet } from './devnet.ts';
import type { ManagerSettings } from './manager-settings.ts';
import type { StatusBoard } from './status-board.ts';
import { devnetEnv, envLines, readyHints } from './hints.ts';
import { acquireDevnetLock, DevnetBusyError, type DevnetLock } from './lock.ts';

interface DevnetFlags {
  validators: number;
  dir: string;
  kubePort: number;
  rpcPort: number;
  /** Default: `manual` on `--fidelity v1` (V1's chart), else `auto`. */
  pacemaker?: 'auto' | 'manual';
  blockInterval: number;
  txMode: 'rpc' | 'cli';
  fidelity: 'intended' | 'v1';
  manager: boolean;
  keys?: number;
  resume?: boolean;
  hooksFile?: string;
  wide?: boolean;
}

function int(min: number, max: number, what: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}`);
    return Number(value);
  };
}

/** A parser of one of `values`; it carries them as `choices` (shell completion reads them). */
function oneOf<T extends string>(values: readonly T[], what: string) {
  const parse = (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`${what} must be one of ${values.join(', ')}`);
    return value as T;
  };
  return Object.assign(parse, { choices: values });
}

export function registerDevnetCommand(program: Command): void {
  const devnet = withDevnetOptions(
    program
      .command('devnet')
      .description(
        'Run a whole localnet on this machine: Kubernetes API emulator, validator nodes as processes, and the manager.',
      ),
  ).action((flags: DevnetFlags) => runDevnet(flags));
  devnet.addHelpText(
    'after',
    examples([
      ['npm start', 'the same as `cluster-manager devnet`: 4 validators, a block a second'],
      ['cluster-manager devnet --validators 6 --pacemaker manual', 'blocks only on trigger-view'],
      ['cluster-manager devnet --dir /tmp/net2 --rpc-port 0', 'a second devnet beside the first'],
      ['npm start -- --resume', 'the chain of the last run, not a fresh one'],
      ['npm start -- --hooks-file hooks.yaml', 'the manager runs your lifecycle hooks'],
      ['cluster-manager devnet env', 'export lines for the devnet in ./.devnet'],
      ['cluster-manager devnet reset', 'stop what a killed devnet left, remove its files'],
    ]),
  );
  registerEnvCommand(devnet);
  registerResetCommand(devnet);
}

/** The devnet command's flags. */
function withDevnetOptions(command: Command): Command {
  return command
    .option('--validators <n>', 'validators at genesis', int(1, 100, '--validators'), 4)
    .option(
      '--keys <n>',
      'keys in the Secret (room to scale; default max(32, 2 × validators))',
      int(1, 999, '--keys'),
    )
    .option(
      '--dir <dir>',
      'the folder of this devnet: kubeconfig, devnet.json, manager.env, journal and logs (a devnet holds it while it runs)',
      DEFAULT_DEVNET_DIR,
    )
    .option(
      '--kube-port <port>',
      'port of the Kubernetes API (0 = any free port)',
      int(0, 65_535, '--kube-port'),
      0,
    )
    .option(
      '--rpc-port <port>',
      "port of the manager's control RPC (0 = any free port)",
      int(0, 65_535, '--rpc-port'),
      8080,
    )
    .option(
      '--pacemaker <mode>',
      'auto (blocks at an interval) or manual (one block per trigger-view); default auto, manual with --fidelity v1 (V1 has no block interval)',
      oneOf(['auto', 'manual'] as const, '--pacemaker'),
    )
    .option(
      '--block-interval <ms>',
      'block interval of the auto pacemaker',
      int(50, 60_000, '--block-interval'),
      1000,
    )
    .option(
      '--tx-mode <mode>',
      'how the manager sends transactions: rpc or cli',
      oneOf(['rpc', 'cli'] as const, '--tx-mode'),
      'rpc',
    )
    .option(
      '--fidelity <profile>',
      "the nodes' profile: intended (Pocket V1 as meant) or v1 (as its Go code runs: no state sync for late joiners, every row ever staked in the quorum, views by debug message); the manager gets CM_POCKET_V1_PROFILE to match",
      oneOf(['intended', 'v1'] as const, '--fidelity'),
      'intended',
    )
    .option('--no-manager', 'start the cluster and chain only')
    .option(
      '--wide',
      "on a terminal, show each validator's reason whole on the board (wrapped onto more lines) instead of cut to fit the width",
    )
    .option(
      '--hooks-file <file>',
      "the manager's lifecycle hooks (docs/hooks.md; CM_HOOKS_FILE in the shell does the same), checked before the devnet starts",
    )
    .option(
      '--resume',
      'bring back the chain this folder last ran (its keys, genesis, ports, replicas and journal) instead of a fresh one',
    );
}

/**
 * `cluster-manager devnet`: starts the devnet, shows it, and stops it on SIGINT or SIGTERM.
 * Signals are ours from the first moment: one that arrives while the devnet starts aborts the
 * start, which stops what was started (node processes would otherwise outlive us).
 */
async function runDevnet(flags: DevnetFlags): Promise<void> {
  const starting = new AbortController();
  let stopRequested: ((signal: NodeJS.Signals) => void) | undefined;
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== undefined) {
      process.stderr.write(`${signal}: still stopping the devnet…\n`);
      return;
    }
    received = signal;
    if (stopRequested === undefined) starting.abort(new Error(`interrupted by ${signal}`));
    else stopRequested(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const view: { board?: StatusBoard | undefined } = {};
    const { devnet, BIN } = await startFromFlags(flags, starting.signal, view);
    view.board = await announce(devnet.info, BIN.clusterManager, flags);
    view.board?.start();
    const stopped = await new Promise<boolean>((resolve) => {
      stopRequested = (signal) => {
        process.stderr.write(`${signal}: stopping the devnet…\n`);
        view.board?.stop();
        devnet.stop().then(
          () => resolve(true),
          (error: unknown) => {
            process.stderr.write(
              `could not stop everything: ${error instanceof Error ? error.message : String(error)}\n`,
            );
            resolve(false);
          },
        );
      };
      // A signal that came between the start and now.
      if (received !== undefined) stopRequested(received);
    });
    if (!stopped) throw new CliError('the devnet did not stop cleanly', ExitCode.failed);
    process.stderr.write('devnet stopped\n');
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * Checks the manager settings, claims the folder, and starts the devnet; any failure is one
 * `devnet did not start: …` line. Log lines go to stderr, the board (once shown) redrawn below.
 */
async function startFromFlags(
  flags: DevnetFlags,
  signal: AbortSignal,
  view: { board?: StatusBoard | undefined },
): Promise<{ devnet: Devnet; BIN: typeof import('./devnet.ts').BIN }> {
  // Before anything starts: what the shell and the flags ask of the manager, or why not.
  const settings = await settingsOf(flags);
  // The folder is claimed first: a second devnet on it is refused before anything loads.
  let lock: DevnetLock;
  try {
    lock = await acquireDevnetLock(resolve(flags.dir));
  } catch (error: unknown) {
    if (error instanceof DevnetBusyError) throw busy(error);
    throw error;
  }
  for (const note of settings.notes) process.stderr.write(`${note}\n`);
  // Loaded on use: the devnet pulls in the emulator, the node and client-node.
  const { BIN, startDevnet } = await import('./devnet.ts');
  try {
    const devnet = await startDevnet({
      validators: flags.validators,
      ...(flags.keys === undefined ? {} : { keys: flags.keys }),
      dir: flags.dir,
      kubePort: flags.kubePort,
      rpcPort: flags.rpcPort,
      // V1's chart runs the manual pacemaker (charts/pocket/values.yaml:80), and V1's auto
      // pacemaker starts each height the moment the last commits (no block interval).
      pacemaker: flags.pacemaker ?? (flags.fidelity === 'v1' ? 'manual' : 'auto'),
      blockIntervalMs: flags.blockInterval,
      txMode: flags.txMode,
      fidelity: flags.fidelity,
      manager: flags.manager,
      managerEnv: settings.env,
      // A manager that exits by itself is restarted, as its Deployment's pod would be.
      restartManagerOnExit: true,
      log: (line) => {
        process.stderr.write(`${line}\n`);
        // The board redraws below the line instead of over it.
        view.board?.lineWritten();
      },
      signal,
      lock,
      resume: flags.resume === true,
    });
    return { devnet, BIN };
  } catch (error: unknown) {
    const reason = signal.aborted
      ? (signal.reason as Error).message
      : error instanceof Error
        ? error.message
        : String(error);
    throw new CliError(
      `devnet did not start: ${reason.replace(/\s*\n\s*/g, '; ')}`,
      ExitCode.failed,
    );
  }
}

/** The ready line, the hints and the page's address; the status board when a manager runs. */
async function announce(
  info: Devnet['info'],
  entry: string,
  flags: DevnetFlags,
): Promise<StatusBoard | undefined> {
  process.stdout.write(
    `devnet ready kube=${info.kubeApi} kubeconfig=${info.kubeconfig} chain=${info.chainRpcUrl}` +
      `${info.managerUrl === null ? '' : ` manager=${info.managerUrl}`} info=${info.dir}/devnet.json\n`,
  );
  const hints = readyHints(info, process.env.INIT_CWD ?? process.cwd(), {
    node: process.execPath,
    entry,
  });
  process.stderr.write(hints.map((line, i) => `  ${i === 0 ? 'try:' : '    '} ${line}\n`).join(''));
  // The participation page; the token rides in the fragment, which the browser keeps to itself.
  if (info.managerUrl !== null && info.token !== null)
    process.stderr.write(
      `  page: ${info.managerUrl}/ui/#token=${encodeURIComponent(info.token)}\n`,
    );
  if (info.managerUrl === null) return undefined;
  const { StatusBoard } = await import('./status-board.ts');
  return new StatusBoard({
    url: info.managerUrl,
    token: info.token ?? undefined,
    out: process.stdout,
    wide: flags.wide === true,
  });
}

/** The manager settings of the flags and the shell (manager-settings.ts); a refusal exits 2. */
async function settingsOf(flags: DevnetFlags): Promise<ManagerSettings> {
  const { managerSettings, ManagerSettingsError } = await import('./manager-settings.ts');
  try {
    return managerSettings(
      { hooksFile: flags.hooksFile, manager: flags.manager },
      process.env,
      process.cwd(),
    );
  } catch (error: unknown) {
    if (error instanceof ManagerSettingsError)
      throw new CliError(`devnet did not start: ${error.message}`, ExitCode.usage);
    throw error;
  }
}

/** The one line for a folder a running devnet holds: never advice that would share it. */
function busy(error: DevnetBusyError): CliError {
  return new CliError(
    `devnet did not start: ${error.message}; stop it first (Ctrl-C in its terminal) or start this one with --dir <another folder>`,
    ExitCode.failed,
  );
}

/**
 * The folder of a devnet subcommand: its own --dir, else the parent's, else the nearest `.devnet`
 * holding a devnet.json from the current folder up (as the other commands find it), else
 * `./.devnet`.
 */
function folderOf(command: Command): string {
  const given = givenDir(command);
  if (given !== undefined) return resolve(given);
  return nearestDevnetDir(process.cwd()) ?? resolve(DEFAULT_DEVNET_DIR);
}

/** The folder as the user named it with --dir, for a hint; undefined for the default. */
function givenDir(command: Command): string | undefined {
  const given =
    command.opts<{ dir?: string }>().dir ?? command.parent?.opts<{ dir?: string }>().dir;
  return given === DEFAULT_DEVNET_DIR ? undefined : given;
}

function registerEnvCommand(devnet: Command): void {
  devnet
    .command('env')
    .description(
      "Print `export …` lines for the running devnet: the manager's URL and token, KUBECONFIG, the chain URL.",
    )
    .option('--dir <dir>', 'the devnet folder (default: .devnet)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        ['eval "$(npx cluster-manager devnet env)"', 'in a shell that wants the variables'],
        ['npx cluster-manager devnet env --dir /tmp/net2', 'another devnet'],
      ]),
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const dir = folderOf(command);
      const info = await readDevnetInfo(dir);
      if (info === undefined)
        throw new CliError(
          `no devnet in ${dir}: start one with \`npm start\` (or \`cluster-manager devnet --dir …\`)`,
          ExitCode.failed,
        );
      // The token of a devnet that no longer runs is printed for nobody: its port may be
      // another server's by now.
      const state = devnetStateOf(dir, info);
      if (state.kind !== 'running')
        throw new CliError(notRunningReason(dir, state, givenDir(command)), ExitCode.failed);
      if (options.json === true) {
        process.stdout.write(`${JSON.stringify(devnetEnv(info), null, 2)}\n`);
        return;
      }
      process.stdout.write(`${envLines(info).join('\n')}\n`);
    });
}

function registerResetCommand(devnet: Command): void {
  devnet
    .command('reset')
    .description(
      'Clean up a devnet folder: stop the processes a killed devnet left running (recorded pids, checked before they are signalled) and remove its files. Refused while a devnet runs there.',
    )
    .option('--dir <dir>', 'the devnet folder (default: .devnet)')
    .addHelpText('after', examples([['npx cluster-manager devnet reset', 'clean ./.devnet']]))
    .action(async (_options: unknown, command: Command) => {
      const dir = folderOf(command);
      const { resetDevnet } = await import('./cleanup.ts');
      let report: Awaited<ReturnType<typeof resetDevnet>>;
      try {
        report = await resetDevnet(dir);
      } catch (error: unknown) {
        if (error instanceof DevnetBusyError)
          throw new CliError(
            `${error.message}; stop it first (Ctrl-C in its terminal, or kill -TERM ${error.holder.process.pid})`,
            ExitCode.failed,
          );
        throw error;
      }
      const stopped = report.stopped.map((s) => s.pid).join(', ');
      const previous =
        report.previous === undefined
          ? ''
          : `the devnet that held ${dir} (pid ${report.previous.process.pid}) is gone; `;
      process.stdout.write(
        `${previous}stopped ${report.stopped.length} process(es)${stopped === '' ? '' : ` (${stopped})`}; ` +
          `removed ${report.removed.length === 0 ? 'nothing' : report.removed.join(', ')}\n`,
      );
    });
}
