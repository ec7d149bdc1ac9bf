// The CLI adapter with a CLI that fails the way V1's p1 does (localnet-cli invoked as `p1`),
// against four validators in the v1 profile: `Debug TriggerView` needs CONFIG_PATH and
// GENESIS_PATH, which the adapter passes when configured, and — on the config V1's chart renders
// (`p2p.hostname: ""`) — POCKET_P2P_HOSTNAME, which the adapter sets to 127.0.0.1 as V1's own
// cli-client does (build/localnet/manifests/cli-client.yaml:84-86); a failure is reported by its
// cause (cobra's `Error:` line, Go's log.Fatal line), not by the usage text p1 prints after it.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { v1ChartConfigJson } from '../../src/localnet/cli/chart-config.ts';
import type { RunningNode } from '../../src/localnet/server.ts';
import { CliChainAdapter } from '../../src/manager/chain/pocket/cli-adapter.ts';
import { isManagerError } from '../../src/manager/errors.ts';
import { ActionKind } from '../../src/manager/model.ts';
import { generateKeys, PocketRpcClient } from '../../src/pocket/index.ts';
import { startInProcessNet, type InProcessNet } from '../localnet/support/in-process-net.ts';
import { pocketStake } from '../../src/manager/chain/pocket/pocket-stake.ts';

const CLI = fileURLToPath(new URL('../../src/bin/localnet-cli.ts', import.meta.url));
const keys = generateKeys({ count: 5, seed: 'cli-adapter-v1' });
let dir: string;
let p1: string;
let net: InProcessNet;
let node: RunningNode;
let rpc: PocketRpcClient;
let files: { configPath: string; genesisPath: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-adapter-v1-'));
  // Invoked under the name p1, localnet-cli behaves as V1's p1 (its v1 mode).
  p1 = join(dir, 'p1');
  symlinkSync(CLI, p1);
  net = await startInProcessNet({ keys, fidelity: 'v1' });
  node = net.nodes[0]!;
  rpc = new PocketRpcClient({ baseUrl: node.rpcUrl });
  files = { configPath: join(dir, 'config.json'), genesisPath: join(dir, 'genesis.json') };
  // What the chart's ConfigMap holds (charts/pocket/values.yaml:73-126): `p2p.hostname` is "".
  writeFileSync(files.configPath, v1ChartConfigJson());
  writeFileSync(files.genesisPath, JSON.stringify(node.node.genesis));
});
afterAll(async () => {
  await net.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The adapter as the manager builds it, with the Node 24 that runs this test first on PATH. */
const adapter = (extra: { configPath?: string; genesisPath?: string } = {}) =>
  new CliChainAdapter({
    cliPath: p1,
    rpcUrl: node.rpcUrl,
    timeoutMs: 30_000,
    tempRoot: dir,
    path: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    ...extra,
  });

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('CliChainAdapter with p1 (v1 localnet-cli)', () => {
  it('cannot trigger a view without the config and genesis files, and says why in one line', async () => {
    const failure = await failureOf(adapter().triggerView(new AbortController().signal));
    expect(isManagerError(failure) && failure.code).toBe('CLI_FAILED');
    expect((failure as Error).message).toBe(
      'Debug TriggerView failed: [ERROR] fatal error reading config file open build/config/config.validator1.json: no such file or directory',
    );
    expect(node.node.chain.height).toBe(0);
  });

  it('triggers views on the chart’s config (POCKET_P2P_HOSTNAME=127.0.0.1): the chain makes blocks', async () => {
    // Before the adapter set the variable, p1 died creating its P2P module on every call:
    // "Debug TriggerView failed: Failed to create p2p module: parsing multiaddr from config: …".
    for (const height of [1, 2]) {
      const reached = await waitFor(
        async () => {
          const heights = net.nodes.map((n) => n.node.chain.height);
          if (heights.every((h) => h >= height)) return Math.min(...heights);
          // Again only while no validator has it: a view after a commit starts the next height.
          if (heights.every((h) => h === height - 1))
            await adapter(files).triggerView(new AbortController().signal);
          return pending(`heights ${heights.join(',')}`);
        },
        { what: `block ${height}`, timeoutMs: 30_000, intervalMs: 300 },
      );
      expect(reached).toBeGreaterThanOrEqual(height);
    }
  });

  it('stakes through p1, and reports a refusal by cobra’s Error line, not the usage after it', async () => {
    const key = keys.get('005')!;
    const request = {
      kind: ActionKind.stake,
      key,
      stake: pocketStake('15100000000', ['0001']),
      serviceUrl: '127.0.0.1:2',
    };
    const cli = adapter(files);
    expect(await cli.send(request, cli.prepare(request), new AbortController().signal)).toBe(
      'admitted',
    );
    expect((await rpc.mempool()).readable).toBe(false); // V1's 135 while the stake waits
    const bad = { ...request, stake: pocketStake('lots', ['0001']) };
    const failure = await failureOf(cli.send(bad, cli.prepare(bad), new AbortController().signal));
    expect(isManagerError(failure) && failure.code).toBe('CLI_FAILED');
    const message = (failure as Error).message;
    // p1's validateStakeAmount (app/client/cli/utils.go:170-174, shared/utils/num_utils.go:13-20).
    expect(message).toBe('the CLI exited with 1: unable to SetString() with base 10');
    expect(message).not.toContain(key.exportPrivateKeyHex().slice(0, 64));
  });
});
