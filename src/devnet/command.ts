// `cluster-manager devnet`: starts the embedded devnet, prints `devnet ready` with its endpoints,
// shows the validators' status until SIGINT/SIGTERM, then stops everything it started.
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, ExitCode } from '../cli/program.ts';
import type { Devnet } from './devnet.ts';

interface DevnetFlags {
  validators: number;
  dir: string;
  kubePort: number;
  rpcPort: number;
  pacemaker: 'auto' | 'manual';
  blockInterval: number;
  txMode: 'rpc' | 'cli';
  manager: boolean;
  keys?: number;
}

function int(min: number, max: number, what: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}`);
    return Number(value);
  };
}

function oneOf<T extends string>(values: readonly T[], what: string) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`${what} must be one of ${values.join(', ')}`);
    return value as T;
  };
}

export function registerDevnetCommand(program: Command): void {
  program
    .command('devnet')
    .description(
      'Run a whole localnet on this machine: Kubernetes API emulator, validator nodes as processes, and the manager.',
    )
    .option('--validators <n>', 'validators at genesis', int(1, 100, '--validators'), 4)
    .option(
      '--keys <n>',
      'keys in the Secret (room to scale; default max(32, 2 × validators))',
      int(1, 999, '--keys'),
    )
    .option('--dir <dir>', 'where kubeconfig, devnet.json, manager.env and logs go', '.devnet')
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
      'auto (blocks at an interval) or manual (one block per trigger-view)',
      oneOf(['auto', 'manual'] as const, '--pacemaker'),
      'auto',
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
    .option('--no-manager', 'start the cluster and chain only')
    .action(async (flags: DevnetFlags) => {
      // Signals are ours from the first moment: one that arrives while the devnet starts aborts
      // the start, which stops what was started (node processes would otherwise outlive us).
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
        // Loaded on use: the devnet pulls in the emulator, the node and client-node.
        const { startDevnet } = await import('./devnet.ts');
        const { StatusBoard } = await import('./status-board.ts');
        let devnet: Devnet;
        try {
          devnet = await startDevnet({
            validators: flags.validators,
            ...(flags.keys === undefined ? {} : { keys: flags.keys }),
            dir: flags.dir,
            kubePort: flags.kubePort,
            rpcPort: flags.rpcPort,
            pacemaker: flags.pacemaker,
            blockIntervalMs: flags.blockInterval,
            txMode: flags.txMode,
            manager: flags.manager,
            log: (line) => process.stderr.write(`${line}\n`),
            signal: starting.signal,
          });
        } catch (error: unknown) {
          const reason = starting.signal.aborted
            ? (starting.signal.reason as Error).message
            : error instanceof Error
              ? error.message
              : String(error);
          throw new CliError(
            `devnet did not start: ${reason.replace(/\s*\n\s*/g, '; ')}`,
            ExitCode.failed,
          );
        }
        const { info } = devnet;
        process.stdout.write(
          `devnet ready kube=${info.kubeApi} kubeconfig=${info.kubeconfig} chain=${info.chainRpcUrl}` +
            `${info.managerUrl === null ? '' : ` manager=${info.managerUrl}`} info=${info.dir}/devnet.json\n`,
        );
        const kubectl = `kubectl --kubeconfig ${info.kubeconfig} get pods`;
        process.stderr.write(
          info.managerUrl === null
            ? `  try: ${kubectl}\n` +
                `       (set -a; . ${info.dir}/manager.env; npm run cluster-manager -- run)   # a manager of your own\n`
            : `  try: export CLUSTER_MANAGER_URL=${info.managerUrl} CLUSTER_MANAGER_TOKEN=$(jq -r .token ${info.dir}/devnet.json)\n` +
                '       npm run cluster-manager -- scale 6 --wait active\n' +
                `       ${kubectl}\n`,
        );
        const board =
          info.managerUrl === null
            ? undefined
            : new StatusBoard({
                url: info.managerUrl,
                token: info.token ?? undefined,
                out: process.stdout,
              });
        board?.start();
        const stopped = await new Promise<boolean>((resolve) => {
          stopRequested = (signal) => {
            process.stderr.write(`${signal}: stopping the devnet…\n`);
            board?.stop();
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
    });
}
