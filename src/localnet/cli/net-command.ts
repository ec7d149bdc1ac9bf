// `localnet-node net`: N node processes on loopback in one command; prints one JSON line when all
// are healthy and stops them all on SIGINT/SIGTERM.
import { Command } from 'commander';
import { CliError, UsageError } from '../../cli/program.ts';
import { Fidelity, isFidelity } from '../fidelity.ts';
import { NetStartError, startNet } from '../net.ts';
import { isPacemakerMode } from '../pacemaker.ts';
import { readKeysFile } from './keys-file.ts';

interface NetFlags {
  keys: string;
  validators: string;
  staked?: string;
  pacemaker: string;
  blockIntervalMs?: string;
  roundTimeoutMs?: string;
  unstakingBlocks?: string;
  basePort?: string;
  keepDir?: boolean;
  fidelity: string;
  debugRoutes?: boolean;
}

function wholeNumber(name: string, value: string | undefined, minimum: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < minimum)
    throw new UsageError(`${name} must be a whole number ≥ ${minimum}`);
  return n;
}

export function netCommand(): Command {
  return new Command('net')
    .description('Start a local network of node processes on 127.0.0.1 until SIGINT/SIGTERM.')
    .requiredOption('--keys <secret.yaml>', 'Secret manifest with the validator keys')
    .requiredOption('--validators <n>', 'how many node processes (ids in order)')
    .option('--staked <m>', 'how many of them are staked at genesis (default all)')
    .option('--pacemaker <mode>', 'manual or auto', 'manual')
    .option('--block-interval-ms <ms>', 'auto pacemaker interval (default 1000)')
    .option('--round-timeout-ms <ms>', 'base consensus step timeout (default 3 intervals)')
    .option('--unstaking-blocks <n>', 'validator_unstaking_blocks (default 2016)')
    .option('--base-port <port>', 'node i uses rpc base+2i and p2p base+2i+1 (default: free ports)')
    .option('--keep-dir', 'keep the temp dir with genesis and logs after stopping')
    .option('--fidelity <profile>', 'intended or v1 (see docs/localnet-node.md)', Fidelity.intended)
    .option('--debug-routes', 'every node serves the debug actions (/v1/debug/*; default off)')
    .action(async (flags: NetFlags) => {
      if (!isPacemakerMode(flags.pacemaker))
        throw new UsageError('--pacemaker must be manual or auto');
      if (!isFidelity(flags.fidelity)) throw new UsageError('--fidelity must be intended or v1');
      const fidelity = flags.fidelity;
      const keys = await readKeysFile(flags.keys);
      const optional = {
        staked: wholeNumber('--staked', flags.staked, 1),
        blockIntervalMs: wholeNumber('--block-interval-ms', flags.blockIntervalMs, 1),
        roundTimeoutMs: wholeNumber('--round-timeout-ms', flags.roundTimeoutMs, 1),
        unstakingBlocks: wholeNumber('--unstaking-blocks', flags.unstakingBlocks, 0),
        basePort: wholeNumber('--base-port', flags.basePort, 1),
      };
      const net = await startNet({
        keys,
        validators: wholeNumber('--validators', flags.validators, 1) ?? 1,
        pacemaker: flags.pacemaker,
        keepDir: flags.keepDir === true,
        fidelity,
        debugRoutes: flags.debugRoutes === true,
        ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
      }).catch((error: unknown) => {
        throw error instanceof NetStartError ? new CliError(error.message) : error;
      });
      const stopped = new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      process.stdout.write(
        `${JSON.stringify({
          nodes: net.nodes.map((n) => ({
            id: n.id,
            address: n.address,
            rpc: n.rpcUrl,
            serviceUrl: n.serviceUrl,
            staked: n.staked,
          })),
          dir: net.dir,
        })}\n`,
      );
      await stopped;
      await net.stop();
    });
}
