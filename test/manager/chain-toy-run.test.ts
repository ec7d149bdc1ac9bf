// A second chain end to end (issue 32 item 3): the toy chain (test/support/toy-chain.ts, ids
// `val-N`, addresses `toy1…`, amounts in utoy) behind HTTP (toy-chain-http.ts), registered by a
// module node imports before the real `cluster-manager run` starts (NODE_OPTIONS=--import …,
// toy-chain-register.ts; ADR 0031), with static discovery: a validators file and a keys file. The
// manager stakes val-4 once, `status` and `actions --validator 4` read it through the debug CLI
// (the id format asked of the manager), and removing val-4 from the file unstakes it once. Every
// effect is read on the toy chain itself: its rows and the transactions of its blocks.
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { ActionKind, ChainStatus } from '../../src/manager/model.ts';
import { lines, runCli, startCli, type CliProcess } from '../rpc/support/cli.ts';
import { chainPortContract } from '../support/chain-port-contract.ts';
import { refusedPort, type RefusedPort } from '../support/owned-ports.ts';
import { ToyChain, toyKey, toyKeyText } from '../support/toy-chain.ts';
import {
  serveToyChain,
  serveToyNode,
  toyHttpPort,
  type Listening,
} from '../support/toy-chain-http.ts';

const TOKEN = 'toy-chain-run-token-0123456789abcdef';
const REGISTER = join(import.meta.dirname, '..', 'support', 'toy-chain-register.ts');
const GENESIS = ['val-1', 'val-2', 'val-3'];
const VAL4 = toyKey('val-4');

let dir: string;
let chain: ToyChain;
let server: Listening | undefined;
const nodes = new Map<string, Listening>();
let manager: CliProcess | undefined;
let env: Record<string, string>;

/** Written as a deploy tool should: a new file renamed into place. */
function writeAtomic(path: string, text: string, mode = 0o600): void {
  writeFileSync(`${path}.next`, text, { mode });
  chmodSync(`${path}.next`, mode);
  renameSync(`${path}.next`, path);
}

/** The validators file for `ids`: the genesis ones with the service URL they were staked with. */
function validatorsFile(ids: readonly string[]): string {
  const entries = ids.map((id) => {
    const serviceUrl = GENESIS.includes(id) ? `${toyKey(id).address}:1` : `${id}.toy:26656`;
    return { id, rpc: nodes.get(id)?.url, serviceUrl };
  });
  return JSON.stringify({ validators: entries });
}

/** The transactions of `kind` signed by `address`, in every block so far. */
function txsOf(address: string, kind: ActionKind) {
  return chain.blocks.flatMap((b) => b.txs).filter((t) => t.signer === address && t.kind === kind);
}

interface ActionRow {
  validatorId: string;
  kind: string;
  state: string;
  mode: string;
  txHash: string | null;
}

async function actionsOf(validator: string): Promise<ActionRow[]> {
  const result = await runCli(['actions', '--json', '--validator', validator], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { actions: ActionRow[] }).actions;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toy-chain-run-'));
  chain = new ToyChain(GENESIS.map((id) => toyKey(id)));
  chain.balances.set(VAL4.address, 1_000n);
  server = await serveToyChain(chain, { blockIntervalMs: 200 });
  for (const id of [...GENESIS, 'val-4']) nodes.set(id, await serveToyNode(chain));
  const keys = Object.fromEntries([...GENESIS, 'val-4'].map((id) => [id, toyKeyText(id)]));
  writeAtomic(join(dir, 'keys.yaml'), JSON.stringify({ kind: 'Secret', stringData: keys }));
  writeAtomic(join(dir, 'validators.yaml'), validatorsFile([...GENESIS, 'val-4']), 0o644);
  manager = startCli(['run'], {
    timeoutMs: 300_000,
    env: {
      NODE_OPTIONS: `--import=${REGISTER}`,
      CM_CHAIN: 'toy',
      CM_CHAIN_RPC_URL: server.url,
      CM_TOY_STAKE_AMOUNT: '70utoy',
      CM_DISCOVERY: 'static',
      CM_VALIDATORS_FILE: join(dir, 'validators.yaml'),
      CM_KEYS_FILE: join(dir, 'keys.yaml'),
      CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: '0',
      CM_RPC_TOKEN: TOKEN,
      CM_READY_DEBOUNCE: '300ms',
      CM_LOG_LEVEL: 'info',
      HOME: dir,
    },
  });
  const url = await waitFor(
    () => {
      const line = lines(manager?.stdout ?? '').find((l) => l.includes('control RPC listening'));
      const found = line === undefined ? undefined : (JSON.parse(line) as { url?: string }).url;
      return found ?? pending(`no control RPC yet; stderr: ${manager?.stderr.slice(-500) ?? ''}`);
    },
    { what: "the manager's control RPC", timeoutMs: 60_000, intervalMs: 100 },
  );
  env = { CLUSTER_MANAGER_URL: url, CLUSTER_MANAGER_TOKEN: TOKEN };
}, 90_000);

afterAll(async () => {
  if (manager !== undefined && manager.child.exitCode === null) {
    manager.child.kill('SIGTERM');
    await manager.exited;
  }
  await server?.close();
  for (const node of nodes.values()) await node.close();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe(
  'the toy chain, driven by `cluster-manager run` with static discovery',
  { timeout: 120_000 },
  () => {
    it('stakes val-4 once, for the configured utoy, and leaves the genesis three alone', async () => {
      await waitFor(
        () =>
          chain.rows.get(VAL4.address)?.status === ChainStatus.staked
            ? true
            : pending(`val-4 not staked at height ${chain.height}`),
        { what: 'val-4 to be staked on the toy chain', timeoutMs: 60_000, intervalMs: 100 },
      );
      expect(chain.rows.get(VAL4.address)).toMatchObject({
        stakedAmount: '70',
        serviceUrl: 'val-4.toy:26656',
      });
      expect(txsOf(VAL4.address, ActionKind.stake)).toEqual([
        expect.objectContaining({ resultCode: 0 }),
      ]);
      for (const id of GENESIS) {
        expect(txsOf(toyKey(id).address, ActionKind.stake)).toEqual([]);
        expect(txsOf(toyKey(id).address, ActionKind.unstake)).toEqual([]);
      }
    });

    it('shows val-4 in `status` and its stake in `actions --validator 4` (the chain’s ids)', async () => {
      const status = await runCli(['status', '--json'], { env });
      expect(status.code).toBe(0);
      const validators = (JSON.parse(status.stdout) as { validators: { id: string | null }[] })
        .validators;
      expect(validators.map((v) => v.id).sort()).toEqual(['val-1', 'val-2', 'val-3', 'val-4']);
      const [stake] = txsOf(VAL4.address, ActionKind.stake);
      // `4` is read in the toy's id format, asked of the manager: val-4, not Pocket's 004.
      const actions = await actionsOf('4');
      expect(actions).toEqual([
        expect.objectContaining({
          validatorId: 'val-4',
          kind: 'stake',
          state: 'committed',
          mode: 'toy-http',
          txHash: stake?.hash,
        }),
      ]);
      expect(await actionsOf('val-4')).toEqual(actions);
    });

    it('unstakes val-4 once when it leaves the validators file', async () => {
      writeAtomic(join(dir, 'validators.yaml'), validatorsFile(GENESIS), 0o644);
      await waitFor(
        () =>
          chain.rows.get(VAL4.address)?.status === ChainStatus.unstaking
            ? true
            : pending(`val-4 is ${chain.rows.get(VAL4.address)?.status ?? 'absent'}`),
        { what: 'val-4 to be unstaking on the toy chain', timeoutMs: 60_000, intervalMs: 100 },
      );
      const [unstake] = txsOf(VAL4.address, ActionKind.unstake);
      expect(txsOf(VAL4.address, ActionKind.unstake)).toHaveLength(1);
      expect(txsOf(VAL4.address, ActionKind.stake)).toHaveLength(1);
      await waitFor(
        async () => {
          const kinds = (await actionsOf('val-4')).map((a) => `${a.kind}:${a.state}`);
          return kinds[0] === 'unstake:committed' ? kinds : pending(kinds.join(', '));
        },
        { what: "the journal to show val-4's unstake", timeoutMs: 20_000, intervalMs: 250 },
      );
      expect(await actionsOf('val-4')).toEqual([
        expect.objectContaining({ kind: 'unstake', state: 'committed', txHash: unstake?.hash }),
        expect.objectContaining({ kind: 'stake', state: 'committed' }),
      ]);
      for (const id of GENESIS)
        expect(chain.rows.get(toyKey(id).address)?.status).toBe(ChainStatus.staked);
    });
  },
);

// The port the manager above used, held to the contract every chain's port is (a chain of its own).
describe('the toy chain over HTTP', () => {
  const contract = { chain: new ToyChain(GENESIS.map((id) => toyKey(id))) } as {
    chain: ToyChain;
    server?: Listening;
    node?: Listening;
    dead?: RefusedPort;
  };
  const newcomer = toyKey('val-9');
  contract.chain.balances.set(newcomer.address, 1_000n);
  beforeAll(async () => {
    contract.server = await serveToyChain(contract.chain, { blockIntervalMs: 60_000 });
    contract.node = await serveToyNode(contract.chain);
    contract.dead = await refusedPort();
  });
  afterAll(async () => {
    await contract.server?.close();
    await contract.node?.close();
    await contract.dead?.release();
  });
  chainPortContract('the toy chain over HTTP', () => {
    const port = toyHttpPort(contract.server?.url ?? '', '70');
    return {
      port,
      newcomer,
      newcomerKeyText: toyKeyText('val-9'),
      unfundedAddress: toyKey('nobody').address,
      serviceUrl: 'val-9.toy:26656',
      genesisCount: GENESIS.length,
      nodeUrl: contract.node?.url ?? '',
      deadNodeUrl: `http://127.0.0.1:${contract.dead?.port ?? 0}`,
      nextBlock: () => port.sender.triggerView(AbortSignal.timeout(5_000)),
    };
  });
});
