// The cost of one action (a stake admitted by the node) through each chain adapter: RPC mode
// (sign here with noble, broadcast_tx_sync) and CLI mode (localnet-cli, p1's syntax: Keys Import
// then Validator Stake, each a process), against one bare process spawn of the node's CLI
// (`localnet-cli --help`), all measured here against one localnet node.
// Run alone: `npx node bench/manager-action.bench.ts`.
import { dirname } from 'node:path';
import { execa } from 'execa';
import { pino } from 'pino';
import { BIN } from '../src/devnet/devnet.ts';
import { buildGenesis, startNode } from '../src/localnet/index.ts';
import type { ChainAdapter } from '../src/manager/chain/adapter.ts';
import { CliChainAdapter } from '../src/manager/chain/pocket/cli-adapter.ts';
import { RpcChainAdapter } from '../src/manager/chain/pocket/rpc-adapter.ts';
import { ActionKind } from '../src/manager/model.ts';
import { generateKeys, PocketRpcClient, type ValidatorKey } from '../src/pocket/index.ts';
import { percentile, round, runAlone, type BenchResult } from './bench-types.ts';
import { pocketStake } from '../src/manager/chain/pocket/pocket-stake.ts';

const RPC_ACTIONS = 200;
const CLI_ACTIONS = 15;
const SPAWNS = 15;
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

async function timeActions(
  adapter: ChainAdapter,
  keys: readonly ValidatorKey[],
): Promise<number[]> {
  const times: number[] = [];
  for (const key of keys) {
    const request = {
      kind: ActionKind.stake,
      key,
      stake: pocketStake('150000000001', ['0001']),
      serviceUrl: '127.0.0.1:1',
    };
    const started = performance.now();
    const outcome = await adapter.send(
      request,
      adapter.prepare(request),
      new AbortController().signal,
    );
    times.push(performance.now() - started);
    if (outcome !== 'admitted') throw new Error(`a stake was ${outcome}, not admitted`);
  }
  return times;
}

export async function run(): Promise<BenchResult[]> {
  const keys = [
    ...generateKeys({ count: 2 + RPC_ACTIONS + CLI_ACTIONS, seed: 'bench-action' }).values(),
  ];
  const genesis = buildGenesis({
    keys: new Map(keys.map((k, i) => [String(i + 1).padStart(3, '0'), k])),
    validators: 1,
    serviceUrl: '127.0.0.1:1',
  });
  const node = await startNode({
    genesis,
    host: '127.0.0.1',
    rpcPort: 0,
    p2pPort: 0,
    pacemaker: 'manual',
    logger: pino({ level: 'silent' }),
  });
  try {
    const rpc = new PocketRpcClient({ baseUrl: node.rpcUrl, timeoutMs: 10_000 });
    const joiners = keys.slice(1);
    // Warm-up of both paths (JIT, connections), not counted.
    await timeActions(new RpcChainAdapter(rpc), joiners.slice(0, 1));
    const rpcTimes = await timeActions(new RpcChainAdapter(rpc), joiners.slice(1, 1 + RPC_ACTIONS));
    const cli = new CliChainAdapter({
      cliPath: BIN.localnetCli,
      rpcUrl: node.rpcUrl,
      timeoutMs: 30_000,
      path: PATH,
    });
    const cliTimes = await timeActions(cli, joiners.slice(1 + RPC_ACTIONS));
    const spawnTimes: number[] = [];
    for (let i = 0; i < SPAWNS; i++) {
      const started = performance.now();
      await execa(BIN.localnetCli, ['--help'], { env: { PATH }, extendEnv: false });
      spawnTimes.push(performance.now() - started);
    }
    const spawn = percentile(spawnTimes, 50);
    const rpcMs = percentile(rpcTimes, 50);
    const cliMs = percentile(cliTimes, 50);
    const floor = { name: 'one spawn of localnet-cli --help (median)', value: round(spawn, 2) };
    return [
      {
        name: 'manager: one stake in RPC mode (sign + broadcast_tx_sync), median',
        value: round(rpcMs, 2),
        unit: 'ms',
        floor,
        ratio: round(rpcMs / spawn, 3),
        notes: `${RPC_ACTIONS} stakes; CLI mode costs ${round(cliMs / rpcMs)}× as much (target ≥ 10×)`,
      },
      {
        name: 'manager: one stake in CLI mode (Keys Import + Validator Stake), median',
        value: round(cliMs, 2),
        unit: 'ms',
        floor,
        ratio: round(cliMs / spawn, 2),
        notes: `${CLI_ACTIONS} stakes; two processes per action, plus a private temporary keybase`,
      },
    ];
  } finally {
    await node.stop();
  }
}

await runAlone(run, import.meta);
