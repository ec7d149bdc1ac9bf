// A network of in-process nodes (no child processes): the first `staked` keys are genesis
// validators, each with a p2p socket that listens from before the genesis names it. The `v1`
// profile needs four: V1's leader never counts its own vote, so one validator alone (or two, or
// three) never commits a block.
import { pino } from 'pino';
import type { Fidelity } from '../../../src/localnet/fidelity.ts';
import { buildGenesis, type Genesis } from '../../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../../src/localnet/server.ts';
import type { ValidatorKey } from '../../../src/pocket/index.ts';
import { ownedPort } from '../../support/owned-ports.ts';

export interface InProcessNet {
  genesis: Genesis;
  /** The nodes in key order; the first `staked` are genesis validators. */
  nodes: RunningNode[];
  stop(): Promise<void>;
}

export async function startInProcessNet(options: {
  keys: ReadonlyMap<string, ValidatorKey>;
  /** Nodes to run (the first keys); default 4. */
  nodes?: number;
  /** Genesis validators among them; default all. */
  staked?: number;
  fidelity?: Fidelity;
  roundTimeoutMs?: number;
  unstakingBlocks?: number;
  debugRoutes?: boolean;
  pacemaker?: 'manual' | 'auto';
  blockIntervalMs?: number;
}): Promise<InProcessNet> {
  const keys = [...options.keys.values()].slice(0, options.nodes ?? 4);
  const sockets = await Promise.all(keys.map(() => ownedPort()));
  const genesis = buildGenesis({
    keys: options.keys,
    validators: options.staked ?? keys.length,
    serviceUrl: (slot) => `127.0.0.1:${sockets[slot.ordinal]?.port ?? 0}`,
    ...(options.unstakingBlocks === undefined ? {} : { unstakingBlocks: options.unstakingBlocks }),
  });
  const nodes: RunningNode[] = [];
  try {
    for (const [i, key] of keys.entries()) {
      nodes.push(
        await startNode({
          genesis,
          key,
          host: '127.0.0.1',
          rpcPort: 0,
          p2pPort: sockets[i]!.server,
          fidelity: options.fidelity,
          roundTimeoutMs: options.roundTimeoutMs ?? 300,
          debugRoutes: options.debugRoutes,
          ...(options.pacemaker === undefined ? {} : { pacemaker: options.pacemaker }),
          ...(options.blockIntervalMs === undefined
            ? {}
            : { blockIntervalMs: options.blockIntervalMs }),
          logger: pino({ level: 'silent' }),
        }),
      );
    }
  } catch (error: unknown) {
    await Promise.all([...nodes.map((n) => n.stop()), ...sockets.map((s) => s.close())]);
    throw error;
  }
  return {
    genesis,
    nodes,
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}
