// Pocket V1 as the manager's chain port: its RPC for reads, its RPC or its CLI (`p1` syntax) for
// transactions, its rules and the capabilities of the configured profile. Its definition
// (definition.ts) builds it from the `pocket-v1` chain's settings.
import { PocketRpcClient } from '../../../pocket/index.ts';
import type { StakeParams } from '../../model.ts';
import type { ChainPort } from '../port.ts';
import { capabilitiesOf, viewTriggerOf, type PocketProfile } from './capabilities.ts';
import { CliChainAdapter } from './cli-adapter.ts';
import { pocketIds } from './id-format.ts';
import { pocketNodeProbe } from './node-probe.ts';
import { readNodeAddress } from './node-identity.ts';
import { pocketKeys } from './pocket-key.ts';
import { pocketReads } from './pocket-reads.ts';
import { pocketRules } from './pocket-rules.ts';
import { RpcChainAdapter } from './rpc-adapter.ts';

export interface PocketChainOptions {
  readonly rpcUrl: string;
  readonly profile: PocketProfile;
  /** What each stake carries (`pocketStake`: uPOKT and relay chains). */
  readonly stake: StakeParams;
  /** Send through the node's CLI (`p1`-compatible, by absolute path) instead of signing here. */
  readonly cli?:
    | {
        readonly path: string;
        readonly timeoutMs: number;
        readonly configPath: string | undefined;
        readonly genesisPath: string | undefined;
      }
    | undefined;
}

export function pocketChain(options: PocketChainOptions): ChainPort {
  const rpc = new PocketRpcClient({ baseUrl: options.rpcUrl, timeoutMs: 10_000 });
  const capabilities = capabilitiesOf(options.profile);
  const sender =
    options.cli === undefined
      ? new RpcChainAdapter(rpc, { viewTrigger: viewTriggerOf(options.profile) })
      : new CliChainAdapter({
          cliPath: options.cli.path,
          rpcUrl: options.rpcUrl,
          timeoutMs: options.cli.timeoutMs,
          configPath: options.cli.configPath,
          genesisPath: options.cli.genesisPath,
        });
  const nodes = new Map<string, PocketRpcClient>();
  return {
    capabilities,
    reads: pocketReads(rpc),
    sender,
    rules: pocketRules,
    ids: pocketIds,
    keys: pocketKeys,
    stake: options.stake,
    nodeReady: pocketNodeProbe(),
    nodeHeight(url, signal) {
      let client = nodes.get(url);
      if (client === undefined) {
        client = new PocketRpcClient({ baseUrl: url, timeoutMs: 2_000 });
        nodes.set(url, client);
      }
      return client.height({ signal, timeoutMs: 2_000 });
    },
    nodeAddress: readNodeAddress,
  };
}
