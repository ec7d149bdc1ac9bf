// A second chain behind the port: the toy chain (test/support/toy-chain.ts) passes the port's
// contract, and drives the real chain view, planner, reconciler and journal through one stake
// and one unstake — with no Pocket key, message type, fee or result code anywhere.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ChainView } from '../../src/manager/chain/chain-view.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ChainKey,
  type DesiredValidator,
  type KeyEntry,
  type ValidatorId,
} from '../../src/manager/model.ts';
import type { KeyLookup, PlanSettings } from '../../src/manager/planner/plan.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { Reconciler } from '../../src/manager/reconcile/reconciler.ts';
import {
  chainPortContract,
  contractChecks,
  type ContractSubject,
} from '../support/chain-port-contract.ts';
import type { ChainPort } from '../../src/manager/chain/port.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { ToyChain, toyKey, toyKeyText } from '../support/toy-chain.ts';

const GENESIS = ['val-1', 'val-2', 'val-3'];

describe('the toy chain', () => {
  const chain = new ToyChain(GENESIS.map(toyKey));
  const newcomer = toyKey('val-4');
  chain.balances.set(newcomer.address, 1_000n);
  const port = chain.port();
  chainPortContract('a toy chain in memory', () => ({
    port,
    newcomer,
    newcomerKeyText: toyKeyText('val-4'),
    unfundedAddress: toyKey('nobody').address,
    serviceUrl: 'toy-val-4:1',
    genesisCount: 3,
    nodeUrl: 'toy://val-4',
    deadNodeUrl: 'toy-nowhere://val-4',
    nextBlock: () => port.sender.triggerView(AbortSignal.timeout(1_000)),
  }));
});

describe('the contract suite', () => {
  /** A subject on a fresh toy chain whose port `change` alters. */
  function subjectWith(change: (port: ChainPort, chain: ToyChain) => ChainPort): ContractSubject {
    const chain = new ToyChain(GENESIS.map(toyKey));
    const newcomer = toyKey('val-4');
    chain.balances.set(newcomer.address, 1_000n);
    const port = change(chain.port(), chain);
    return {
      port,
      newcomer,
      newcomerKeyText: toyKeyText('val-4'),
      unfundedAddress: toyKey('nobody').address,
      serviceUrl: 'toy-val-4:1',
      genesisCount: 3,
      nodeUrl: 'toy://val-4',
      deadNodeUrl: 'toy-nowhere://val-4',
      nextBlock: () => port.sender.triggerView(AbortSignal.timeout(1_000)),
    };
  }

  it('passes the honest toy chain (the check below is the one that fails a careless port)', async () => {
    await expect(
      contractChecks.stake(
        subjectWith((port) => port),
        5_000,
      ),
    ).resolves.toBeUndefined();
  });

  it('fails a port whose validators(height) answers the latest rows, whatever the height', async () => {
    const careless = subjectWith((port, chain) => ({
      ...port,
      reads: { ...port.reads, validators: () => Promise.resolve([...chain.rows.values()]) },
    }));
    await expect(contractChecks.stake(careless, 5_000)).rejects.toThrow(
      /expected 'staked' not to be 'staked'/,
    );
  });

  it("fails a port that reads the genesis set's size wrong, or a key as another address", async () => {
    const miscounted = subjectWith((port) => ({
      ...port,
      reads: { ...port.reads, genesisValidators: () => Promise.resolve(['a', 'b', 'c', 'd']) },
    }));
    await expect(contractChecks.facts(miscounted, 5_000)).rejects.toThrow(/expected 4 to be 3/);
    const misread = subjectWith((port) => ({
      ...port,
      keys: { parse: (text) => ({ ...port.keys.parse(text), address: 'toy1elsewhere' }) },
    }));
    await expect(contractChecks.ids(misread, 5_000)).rejects.toThrow(/toy1elsewhere/);
  });
});

/** Keys by id, as a key source of the toy chain would hold them. */
function toyKeys(ids: readonly ValidatorId[]): KeyLookup {
  const entries = new Map<ValidatorId, KeyEntry>(
    ids.map((id) => [id, { id, ok: true, key: toyKey(id) }]),
  );
  const byAddress = (address: string) =>
    [...entries.values()].filter((e) => e.ok && e.key.address === address).map((e) => e.id);
  return {
    get: (id) => entries.get(id),
    idOfAddress: (address) => byAddress(address)[0],
    idsOfAddress: byAddress,
    addressOf: (id) => {
      const entry = entries.get(id);
      return entry?.ok === true ? entry.key.address : undefined;
    },
  };
}

function wanted(id: ValidatorId, yes: boolean): DesiredValidator {
  return {
    id,
    wanted: yes,
    wantedReason: yes ? 'listed' : 'not listed',
    statefulSet: undefined,
    ordinal: undefined,
    conflict: undefined,
    pod: yes
      ? {
          name: `toy-${id}`,
          namespace: 'toy',
          uid: `uid-${id}`,
          ready: true,
          readySince: 0,
          terminating: false,
          held: false,
          draining: false,
          nodeRpcUrl: `toy://${id}`,
          serviceUrl: `toy-${id}:1`,
        }
      : undefined,
  };
}

describe('the core on a chain that is not Pocket', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('stakes a wanted validator once and unstakes it once it is no longer wanted', async () => {
    const chain = new ToyChain(GENESIS.map(toyKey));
    const port = chain.port();
    const clock = new ManualClock(10_000);
    const logger = pino({ level: 'silent' });
    const dir = mkdtempSync(join(tmpdir(), 'cm-toy-'));
    dirs.push(dir);
    const book = new ActionBook(Journal.open(join(dir, 'journal.db'), clock));
    const ids = [...GENESIS, 'val-4'];
    const desired = new Map(ids.map((id) => [id, wanted(id, true)]));
    const settings: PlanSettings = {
      readyDebounceMs: 0,
      syncTolerance: 2,
      syncCheck: false,
      pacing: 'bft',
      stake: port.stake,
      nodeHeightMaxAgeMs: 10_000,
      votingWindow: 20,
      capabilities: port.capabilities,
    };
    // eslint-disable-next-line prefer-const -- the view's listener calls the reconciler built after it
    let reconciler: Reconciler;
    const view = new ChainView({
      reads: port.reads,
      clock,
      logger,
      pollIntervalMs: 100,
      listener: {
        onBlocks: (txs) => reconciler.onBlocks(txs),
        onHeight: () => undefined,
      },
    });
    reconciler = new Reconciler({
      world: {
        desired: () => ({ validators: desired, unresolvedWanted: [], problems: [] }),
        keys: toyKeys(ids),
        chain: view,
        book,
        nodeHeights: new Map(),
        isSynced: () => true,
        isPaused: () => false,
        trust: () => ({ trusted: view.trusted, reason: view.untrustedReason }),
        minimumSet: () => ({ size: 3, source: 'test' }),
        eventTarget: () => undefined,
      },
      adapter: port.sender,
      reads: port.reads,
      rules: port.rules,
      probeNode: (url, signal) => port.nodeHeight(url, signal),
      settings,
      clock,
      logger,
      recorder: undefined,
      metrics: new Metrics(),
      pollIntervalMs: 100,
      enqueue: () => undefined,
    });
    const signal = AbortSignal.timeout(10_000);
    const newcomer: ChainKey = toyKey('val-4');
    const txsOf = (kind: ActionKind) =>
      chain.blocks
        .flatMap((b) => b.txs)
        .filter((t) => t.signer === newcomer.address && t.kind === kind);

    await view.tick();
    expect(reconciler.planOne('val-4')).toMatchObject({
      action: ActionKind.stake,
      waitingFor: undefined,
    });
    await reconciler.reconcile('val-4', signal);
    expect([...chain.mempool.values()]).toEqual([
      expect.objectContaining({ signer: newcomer.address, kind: ActionKind.stake }),
    ]);
    // Reconciling again while it is pending sends nothing more.
    await reconciler.reconcile('val-4', signal);
    expect(chain.mempool.size).toBe(1);

    chain.commit();
    await view.tick();
    expect(chain.rows.get(newcomer.address)?.status).toBe(ChainStatus.staked);
    expect(book.latest.get('val-4')).toMatchObject({
      kind: ActionKind.stake,
      state: ActionState.committed,
    });
    await reconciler.reconcile('val-4', signal);
    expect(chain.mempool.size).toBe(0);
    expect(reconciler.planOne('val-4')?.action).toBe('none');

    // No longer wanted: unstaked once (the minimum of 3 holds with the genesis set).
    desired.set('val-4', wanted('val-4', false));
    expect(reconciler.planOne('val-4')).toMatchObject({
      action: ActionKind.unstake,
      waitingFor: undefined,
    });
    await reconciler.reconcile('val-4', signal);
    await reconciler.reconcile('val-4', signal);
    expect(chain.mempool.size).toBe(1);
    chain.commit();
    await view.tick();
    await reconciler.reconcile('val-4', signal);
    expect(chain.rows.get(newcomer.address)?.status).toBe(ChainStatus.unstaking);
    expect(book.latest.get('val-4')).toMatchObject({
      kind: ActionKind.unstake,
      state: ActionState.committed,
    });
    expect(txsOf(ActionKind.stake)).toHaveLength(1);
    expect(txsOf(ActionKind.unstake)).toHaveLength(1);
    expect(chain.mempool.size).toBe(0);
  });
});
