// Pocket V1's implementation of the chain port (src/manager/chain/pocket/) passes the port's
// contract against a real localnet node process, in both transports: signing here and
// broadcasting over RPC, and V1's CLI (`localnet-cli`, `p1` syntax).
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { pocketChain } from '../../src/manager/chain/pocket/pocket-chain.ts';
import { pocketStake } from '../../src/manager/chain/pocket/pocket-stake.ts';
import type { ChainPort } from '../../src/manager/chain/port.ts';
import { startNet, type LocalNet } from '../../src/localnet/net.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { chainPortContract } from '../support/chain-port-contract.ts';

const CLI = fileURLToPath(new URL('../../src/bin/localnet-cli.ts', import.meta.url));

for (const transport of ['rpc', 'cli'] as const) {
  const keys = generateKeys({ count: 2, seed: `chain-port-${transport}` });
  let net: LocalNet;
  let port: ChainPort;
  beforeAll(async () => {
    // 002 runs a full node: once staked it syncs and votes (a silent second row would halt a
    // chain of one validator).
    net = await startNet({ keys, validators: 2, staked: 1, debugRoutes: true });
    port = pocketChain({
      rpcUrl: net.nodes[0]!.rpcUrl,
      profile: 'intended',
      stake: pocketStake('15100000000', ['0001']),
      cli:
        transport === 'cli'
          ? { path: CLI, timeoutMs: 30_000, configPath: undefined, genesisPath: undefined }
          : undefined,
    });
  }, 90_000);
  afterAll(async () => {
    await net.stop();
  });

  chainPortContract(`Pocket V1 over ${transport}`, () => ({
    port,
    newcomer: keys.get('002')!,
    newcomerKeyText: keys.get('002')!.exportPrivateKeyHex(),
    unfundedAddress: generateKeys({ count: 1, seed: 'nobody funded this' }).get('001')!.address,
    serviceUrl: '127.0.0.1:42069',
    genesisCount: 1,
    nodeUrl: net.nodes[0]!.rpcUrl,
    deadNodeUrl: 'http://127.0.0.1:9',
    async nextBlock() {
      const before = await port.reads.height();
      await port.sender.triggerView(AbortSignal.timeout(10_000));
      await waitFor(async () => (await port.reads.height()) > before, {
        timeoutMs: 20_000,
        what: 'the next block',
      });
    },
  }));
}
