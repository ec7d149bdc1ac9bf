// The Reconciler with its real collaborators inside the manager (planner, ActionBook on an
// in-memory journal, ChainView, EventRecorder) and fakes only of ports: the chain (fake-ledger.ts
// over fake-chain.ts: sending, blocks, rows, mempool), the node height probe and the Kubernetes
// API (fake-kube-api.ts). Every action is checked by its effect on the fake chain: how many
// transactions of the validator were sent and committed, and its row.
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChainAdapter } from '../../src/manager/chain/adapter.ts';
import { ChainView } from '../../src/manager/chain/chain-view.ts';
import { pocketReads } from '../../src/manager/chain/pocket/pocket-reads.ts';
import { pocketRules } from '../../src/manager/chain/pocket/pocket-rules.ts';
import { ManagerError } from '../../src/manager/errors.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { EventRecorder } from '../../src/manager/kube/event-recorder.ts';
import { createLogger, type Logger } from '../../src/manager/logger.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import type { PodRef } from '../../src/manager/discovery/port.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import type { DesiredValidator, FormerKey, NodeKey, ValidatorId } from '../../src/manager/model.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import type { PlanSettings } from '../../src/manager/planner/plan.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { Reconciler } from '../../src/manager/reconcile/reconciler.ts';
import {
  fencedSender,
  SendFence,
  type Leadership,
} from '../../src/manager/reconcile/send-fence.ts';
import { V1Code } from '../../src/pocket/index.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { FakeKubeApi } from '../support/fake-kube-api.ts';
import { FakeLedger } from '../support/fake-ledger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import {
  keyOf,
  keysSeenOf,
  keyStore,
  NOW,
  SETTINGS,
  unwanted,
  wanted,
} from '../support/plan-fixture.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const GENESIS = ['001', '002', '003', '004'];
const POLL_MS = 500;
const addr = (id: ValidatorId): string => keyOf(id).address;

interface Options {
  desired?: DesiredValidator[];
  journal?: Journal;
  ledger?: FakeLedger;
  logger?: Logger;
  /** When each id's current key was first seen (the address is its key's). */
  keysSeen?: Record<ValidatorId, number>;
  /** Discovery's pod delete (a fake); absent: a source without pods. */
  restartPod?: (pod: PodRef) => Promise<'deleted' | 'gone' | 'forbidden'>;
  settings?: Partial<PlanSettings>;
  paused?: boolean;
  /** The sender the reconciler gets (default: the ledger itself). */
  adapter?: (ledger: FakeLedger) => ChainAdapter;
  /** The keys (default: 001–006 as the fixture has them). */
  keys?: KeyStore;
  /** Former keys and what the nodes say they sign with (a rotation). */
  formerKeys?: Map<ValidatorId, FormerKey[]>;
  nodeKeys?: Map<string, NodeKey>;
}

/** A chain of four genesis validators at height 20, and a manager's middle around it. */
function setup(options: Options = {}) {
  const ledger =
    options.ledger ??
    (() => {
      const chain = new FakeChain(GENESIS.map(addr)).grow(20);
      chain.rows = GENESIS.map((id) => actor(addr(id)));
      return new FakeLedger(chain);
    })();
  const clock = new ManualClock();
  const logger = options.logger ?? pino({ level: 'silent' });
  const kube = new FakeKubeApi();
  const journal = options.journal ?? Journal.open(':memory:', clock);
  const book = new ActionBook(journal);
  const desired = new Map((options.desired ?? [wanted('005')]).map((d) => [d.id, d]));
  const enqueued: ValidatorId[] = [];
  const late: { reconciler?: Reconciler } = {};
  const view = new ChainView({
    reads: pocketReads(ledger.chain),
    clock,
    logger,
    pollIntervalMs: POLL_MS,
    listener: { onBlocks: (txs) => late.reconciler?.onBlocks(txs), onHeight: () => undefined },
  });
  const keys = options.keys ?? keyStore(['001', '002', '003', '004', '005', '006']);
  const world = {
    desired: () => ({ validators: desired, unresolvedWanted: [], problems: [] }),
    keys,
    chain: view,
    book,
    nodeHeights: new Map<ValidatorId, { height: number; at: number }>(),
    isSynced: () => view.synced,
    isPaused: () => options.paused === true,
    trust: () => ({ trusted: view.trusted, reason: view.untrustedReason }),
    minimumSet: () => ({ size: 0, source: 'test' }),
    eventTarget: (id: ValidatorId) => ({
      kind: 'Pod',
      apiVersion: 'v1',
      name: `validator-${Number(id) - 1}`,
      namespace: 'ns',
      uid: `uid-${id}`,
    }),
    ...(options.keysSeen === undefined ? {} : { keysSeen: keysSeenOf(options.keysSeen, keys) }),
    ...(options.formerKeys === undefined ? {} : { formerKeys: options.formerKeys }),
    ...(options.nodeKeys === undefined ? {} : { nodeKeys: options.nodeKeys }),
  };
  const metrics = new Metrics();
  const reconciler = new Reconciler({
    world,
    adapter: options.adapter?.(ledger) ?? ledger,
    reads: pocketReads(ledger.chain),
    rules: pocketRules,
    probeNode: () => Promise.resolve(ledger.chain.top), // every node is in sync
    settings: { ...SETTINGS, ...options.settings },
    clock,
    logger,
    recorder: new EventRecorder({
      core: new CoreV1Api(kube.configuration),
      component: 'cluster-manager',
      instance: 'test',
      logger,
      clock,
    }),
    metrics,
    pollIntervalMs: POLL_MS,
    enqueue: (id) => enqueued.push(id),
    restartPod: options.restartPod,
  });
  late.reconciler = reconciler;
  const r = reconciler;
  return {
    ledger,
    chain: ledger.chain,
    view,
    book,
    journal,
    reconciler: r,
    enqueued,
    clock,
    desired,
    metrics,
    events: () =>
      kube
        .list('/api/v1/namespaces/ns/events')
        .map((e) => `${String(e.reason)}: ${String(e.message)}`),
    reconcile: (id: ValidatorId) => r.reconcile(id, new AbortController().signal),
    /** A block is committed and the view polls. */
    block: async () => {
      ledger.commit();
      await view.tick();
    },
  };
}

/** The real root logger (redaction, `err` serializer), writing JSON lines into an array. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: {
      write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
    },
  });
  return { logger, lines };
}

describe('Reconciler', () => {
  it('a key rotation: the old address is unstaked, signed with the old key held in memory, journaled under its address', async () => {
    // 005 staked under its key; the Secret now gives 005 015's key; its pod's node still signs
    // with the old one (it says so). The manager kept the old key in memory when the Secret changed.
    const ledger = (() => {
      const chain = new FakeChain([...GENESIS, '005'].map(addr)).grow(20);
      chain.rows = [...GENESIS, '005'].map((id) => actor(addr(id)));
      return new FakeLedger(chain);
    })();
    const secret = (of: string) => ({
      metadata: { resourceVersion: of },
      data: Object.fromEntries(
        [...GENESIS.map((id) => [id, id]), ['005', of]].map(([id, k]) => [
          id,
          Buffer.from(keyOf(k ?? '').exportPrivateKeyHex()).toString('base64'),
        ]),
      ),
    });
    const keys = new KeyStore(pocketIds, pocketKeys);
    keys.update(keySetOfSecret(secret('005')));
    keys.update(keySetOfSecret(secret('015')));
    const t = setup({
      ledger,
      keys,
      desired: [...GENESIS.map((id) => wanted(id)), wanted('005', { startedAt: NOW - 60_000 })],
      keysSeen: { '005': NOW - 10_000 },
      formerKeys: new Map([
        ['005', [{ address: addr('005'), observedAt: NOW - 3_600_000, replacedAt: NOW - 10_000 }]],
      ]),
      nodeKeys: new Map([['uid-005', { address: addr('005'), startedAt: NOW - 60_000 }]]),
    });
    await t.view.tick();
    await t.reconcile('005');
    expect(t.book.open.get('005')).toMatchObject({ kind: 'unstake', address: addr('005') });
    await t.block();
    // Committed on chain, by the old address (so the old key signed it), exactly once.
    expect(t.ledger.committedBy(addr('005'), 'MessageUnstake')).toHaveLength(1);
    expect(t.ledger.committedBy(keyOf('015').address, 'MessageStake')).toHaveLength(0);
    expect(t.view.validators.get(addr('005'))?.status).toBe('unstaking');
    for (let i = 0; i < 3; i++) await t.reconcile('005');
    expect(t.ledger.sends).toHaveLength(1);
  });

  it('a wanted validator: prepares (journal first), sends once, and confirms from the block', async () => {
    const t = setup();
    await t.view.tick();
    const sent: string[] = [];
    t.book.onChange((r) => sent.push(`${r.state}:${String(t.ledger.sends.length)}`));

    expect(await t.reconcile('005')).toEqual({ requeueAfterMs: 2 * POLL_MS });
    // Written (prepared) before anything was sent, then marked sent after the node admitted it.
    expect(sent).toEqual(['prepared:0', 'sent:1']);
    const open = t.book.open.get('005')!;
    expect(open).toMatchObject({ kind: 'stake', state: 'sent', address: addr('005') });
    expect(t.chain.pending.map((p) => p.tx.hash)).toEqual([open.txHash]);

    // Followed, not sent again, while the block has not come: neither before the view has
    // polled the mempool again, nor after it saw the transaction there.
    await t.reconcile('005');
    await t.view.tick();
    await t.reconcile('005');
    expect(t.ledger.sends).toHaveLength(1);
    expect(t.book.open.get('005')?.attempts).toBe(1);

    await t.block();
    expect(t.book.open.has('005')).toBe(false);
    expect(t.book.latest.get('005')).toMatchObject({ state: 'committed', committedHeight: 21 });
    expect(t.enqueued).toEqual(['005']);
    expect(t.ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(1);
    expect(t.view.validators.get(addr('005'))?.status).toBe('staked');
    expect(t.events()).toEqual([
      `Staked: validator 005: stake of ${addr('005')} committed at height 21`,
    ]);

    // Nothing more to do: no second stake, however often it is reconciled.
    for (let i = 0; i < 3; i++) await t.reconcile('005');
    await t.block();
    expect(t.ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(1);
    expect(t.ledger.sends).toHaveLength(1);
  });

  it('an unwanted staked validator is unstaked once, and its row leaves the set', async () => {
    const t = setup({ desired: [...GENESIS.slice(0, 3).map((id) => wanted(id)), unwanted('004')] });
    await t.view.tick();
    for (const id of GENESIS) await t.reconcile(id);
    expect([...t.book.open.keys()]).toEqual(['004']);
    await t.block();
    await t.reconcile('004');
    expect(t.ledger.committedBy(addr('004'), 'MessageUnstake')).toHaveLength(1);
    expect(t.view.validators.get(addr('004'))?.status).toBe('unstaking');
    expect(t.book.latest.get('004')).toMatchObject({ kind: 'unstake', state: 'committed' });
    expect(t.ledger.sends).toHaveLength(1);
  });

  it('a send refused terminally: failed in the journal, a Warning Event, and not retried while nothing changes', async () => {
    const t = setup();
    await t.view.tick();
    t.ledger.refuseNext = new ManagerError(
      'TX_REJECTED',
      'the node refused the stake: V1 error 45 (below minimum)',
    );
    expect(await t.reconcile('005')).toBeUndefined();
    expect(t.book.open.has('005')).toBe(false);
    expect(t.book.latest.get('005')).toMatchObject({
      state: 'failed',
      errorCode: 'TX_REJECTED',
      terminal: true,
    });
    expect(t.events()).toEqual([
      'StakeFailed: validator 005: the node refused the stake: V1 error 45 (below minimum)',
    ]);
    for (let i = 0; i < 3; i++) {
      await t.block();
      await t.reconcile('005');
    }
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.chain.pending).toEqual([]);
    expect(t.ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(0);
  });

  it('a stake included with a failing result code: failed terminally with the code, a Warning Event', async () => {
    const t = setup();
    await t.view.tick();
    await t.reconcile('005');
    t.ledger.resultCodes.set(t.book.open.get('005')!.txHash!, V1Code.minimumStake);
    await t.block();
    expect(t.book.latest.get('005')).toMatchObject({
      state: 'failed',
      errorCode: 'STAKE_BELOW_MINIMUM',
      resultCode: V1Code.minimumStake,
      terminal: true,
    });
    expect(t.events()).toEqual([
      `StakeFailed: validator 005: the stake amount is below the chain's minimum stake (code ${V1Code.minimumStake})`,
    ]);
    await t.reconcile('005');
    expect(t.ledger.sends).toHaveLength(1);
  });

  it('a send that may have reached the node (retryable): kept open, then the same bytes are sent again', async () => {
    const t = setup();
    await t.view.tick();
    t.ledger.refuseNext = new ManagerError('CHAIN_UNAVAILABLE', 'socket hang up');
    await expect(t.reconcile('005')).rejects.toMatchObject({ code: 'CHAIN_UNAVAILABLE' });
    const open = t.book.open.get('005')!;
    expect(open.state).toBe('prepared');

    await t.reconcile('005'); // follows the open action: resends its recorded bytes
    expect(t.ledger.sends).toEqual([open.txHash]);
    expect(t.book.open.get('005')).toMatchObject({ seq: open.seq, state: 'sent' });
    await t.block();
    expect(t.ledger.committedBy(addr('005'), 'MessageStake').map((c) => c.tx.hash)).toEqual([
      open.txHash,
    ]);
  });

  it('restart between journal and send: a new reconciler over the same journal sends those bytes, once', async () => {
    const chain = new FakeChain(GENESIS.map(addr)).grow(20);
    chain.rows = GENESIS.map((id) => actor(addr(id)));
    const ledger = new FakeLedger(chain);
    const journal = Journal.open(':memory:', new ManualClock());
    const first = setup({ ledger, journal });
    await first.view.tick();
    // The first process dies in the send (the signal aborts it; nothing reached the node).
    ledger.refuseNext = new ManagerError('CANCELLED', 'shutting down');
    expect(await first.reconcile('005')).toBeUndefined();
    const prepared = first.book.open.get('005')!;
    expect(prepared.state).toBe('prepared');
    expect(ledger.sends).toEqual([]);

    const second = setup({ ledger, journal });
    await second.view.tick();
    await second.reconcile('005');
    expect(ledger.sends).toEqual([prepared.txHash]);
    await second.block();
    expect(second.book.latest.get('005')).toMatchObject({ seq: prepared.seq, state: 'committed' });
    expect(ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(1);
  });

  it('a transaction the mempool lost: sent again (same bytes) up to three times, then dropped (TX_DROPPED)', async () => {
    const t = setup();
    await t.view.tick();
    await t.reconcile('005');
    const hash = t.book.open.get('005')!.txHash!;
    // Lost, but fewer than three blocks ago: still given time.
    t.ledger.dropMempool();
    for (let i = 0; i < 2; i++) await t.block();
    await t.reconcile('005');
    expect(t.ledger.sends).toEqual([hash]);
    const follow = async (): Promise<void> => {
      t.ledger.dropMempool();
      for (let i = 0; i < 3; i++) await t.block(); // three blocks without it
      await t.reconcile('005');
    };
    for (let resend = 1; resend <= 3; resend++) {
      await follow();
      expect(t.ledger.sends).toEqual(Array.from({ length: resend + 1 }, () => hash));
      expect(t.book.open.get('005')?.attempts).toBe(resend + 1);
    }
    t.ledger.dropMempool();
    for (let i = 0; i < 3; i++) await t.block();
    await expect(t.reconcile('005')).rejects.toMatchObject({ code: 'TX_DROPPED' });
    expect(t.book.latest.get('005')).toMatchObject({ state: 'dropped', seq: 1 });
    expect(t.ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(0);
    // A new action (a new transaction) may follow: the drop is not terminal.
    await t.reconcile('005');
    expect(t.book.open.get('005')).toMatchObject({ seq: 2, state: 'sent' });
  });

  it('dropped because the account cannot pay: failed terminally (INSUFFICIENT_FUNDS), not retried', async () => {
    const t = setup();
    t.ledger.setBalance(addr('005'), 5n);
    await t.view.tick();
    await t.reconcile('005');
    for (let i = 0; i < 4; i++) {
      t.ledger.dropMempool();
      for (let b = 0; b < 3; b++) await t.block();
      await t.reconcile('005');
    }
    expect(t.book.latest.get('005')).toMatchObject({
      state: 'failed',
      errorCode: 'INSUFFICIENT_FUNDS',
      terminal: true,
    });
    expect(t.events()).toEqual([
      `StakeFailed: validator 005: the account of ${addr('005')} cannot pay for the stake; the chain dropped it`,
    ]);
    const sends = t.ledger.sends.length;
    await t.block();
    await t.reconcile('005');
    expect(t.ledger.sends).toHaveLength(sends);
  });

  it('an untrusted chain (height went back): an open action is neither sent again nor dropped', async () => {
    const t = setup();
    await t.view.tick();
    await t.reconcile('005');
    t.ledger.dropMempool();
    for (let i = 0; i < 5; i++) await t.block();
    t.chain.servedHeight = 10; // the node restarted from an old snapshot
    await t.view.tick();
    expect(t.view.trusted).toBe(false);
    expect(await t.reconcile('005')).toBeUndefined();
    expect(t.reconciler.waiting.has('005')).toBe(true);
    expect(t.ledger.sends).toHaveLength(1);
    expect(t.book.open.get('005')?.state).toBe('sent');
  });
});

describe('the reconciler’s log lines', () => {
  it('every line of one pass carries that pass’s reconcile id, and failures go under err with key-length hex cut out', async () => {
    const { logger, lines } = capture();
    const t = setup({ desired: [wanted('005'), unwanted('004')], logger });
    await t.view.tick();
    const pass = async (id: ValidatorId): Promise<Record<string, unknown>[]> => {
      const from = lines.length;
      await t.reconcile(id);
      return lines.slice(from);
    };

    const first = await pass('004'); // the unstake is sent
    expect(first.map((l) => l.msg)).toContain('unstake sent');

    const leaked = 'ab'.repeat(64); // as long as a private key, as a CLI's output might quote one
    t.ledger.refuseNext = new ManagerError('TX_REJECTED', `the node refused the stake: ${leaked}`);
    const second = await pass('005');
    const failure = second.find(
      (l) => l.msg === 'stake failed; not retried until its inputs change',
    );

    for (const line of first) expect(line.reconcile).toBe(1);
    for (const line of second) expect(line.reconcile).toBe(2);
    expect(failure).toMatchObject({
      validator: '005',
      err: { type: 'ManagerError', message: expect.stringContaining('[redacted]') as unknown },
    });
    expect(JSON.stringify(lines)).not.toContain(leaked);
  });
});

describe('the queue’s line about a failed pass', () => {
  it('passOf(id) is the number of the pass that threw, as its own lines carry it', async () => {
    const t = setup({ desired: [wanted('005'), unwanted('004')] });
    await t.view.tick();
    await t.reconcile('004');
    expect(t.reconciler.passOf('004')).toBe(1);
    t.journal.close(); // the stake cannot be written: the pass throws
    await expect(t.reconcile('005')).rejects.toThrow();
    expect(t.reconciler.passOf('005')).toBe(2);
    expect(t.reconciler.passOf('004')).toBe(1);
    expect(t.reconciler.passOf('006')).toBeUndefined();
  });
});

describe('a pod whose node started before its key was seen', () => {
  /** 005's key was seen at 12:00:00.400; its pod's node started 3 s before. */
  const stale = {
    // The genesis members each have a Ready pod of their own: deleting 005's takes no voter away.
    desired: [...GENESIS.map((id) => wanted(id)), wanted('005', { startedAt: NOW - 3_000 })],
    keysSeen: { '005': NOW + 400 },
  };

  function deletes(answer: 'deleted' | 'gone' | 'forbidden' = 'deleted') {
    const calls: PodRef[] = [];
    return {
      calls,
      restartPod: (pod: PodRef) => {
        calls.push(pod);
        return Promise.resolve(answer);
      },
    };
  }

  it('is deleted once per uid (uid as the precondition), with a log line, an Event and a metric; nothing is sent', async () => {
    const pods = deletes();
    const log = capture();
    const t = setup({ ...stale, restartPod: pods.restartPod, logger: log.logger });
    await t.view.tick();
    await t.reconcile('005');
    await t.reconcile('005');
    expect(pods.calls).toEqual([{ name: 'validator-4', namespace: 'default', uid: 'uid-005' }]);
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.book.open.size).toBe(0);
    expect(t.events()).toEqual([
      expect.stringMatching(
        /^StaleKeyRestart: validator 005: pod validator-4 started before its current key was seen \(started 11:59:57Z, key seen 12:00:00\.400Z\): its node may hold an older key; deleted it \(uid uid-005\) for its StatefulSet to start it again with the current key$/,
      ),
    ]);
    expect(log.lines.filter((l) => String(l.msg).includes('deleted it (uid uid-005)'))).toEqual([
      expect.objectContaining({
        level: 'info',
        validator: '005',
        pod: 'validator-4',
        uid: 'uid-005',
      }),
    ]);
    expect((await t.metrics.staleKeyPods.get()).values).toEqual([
      expect.objectContaining({ labels: { action: 'restarted' }, value: 1 }),
    ]);
    // Until its replacement comes, it says so.
    expect(t.reconciler.planOne('005')?.reason).toMatch(
      /; restarted it, waiting for its replacement$/,
    );
  });

  it("a staked row whose pod's node says it signs another key (out of the set): the pod is deleted, nothing sent (soak seed 951301)", async () => {
    // 005's row is staked under its current key, but its pod's node signs 015's (which is no
    // member): nobody signs 005's row. Was: `staked`, nothing done, for good.
    const ledger = (() => {
      const chain = new FakeChain([...GENESIS, '005'].map(addr)).grow(20);
      chain.rows = [...GENESIS, '005'].map((id) => actor(addr(id)));
      return new FakeLedger(chain);
    })();
    const pods = deletes();
    const t = setup({
      ledger,
      restartPod: pods.restartPod,
      desired: [...GENESIS.map((id) => wanted(id)), wanted('005', { startedAt: NOW - 3_000 })],
      keysSeen: { '005': NOW - 1_000 },
      formerKeys: new Map([
        [
          '005',
          [{ address: keyOf('015').address, observedAt: NOW - 9_000, replacedAt: NOW - 1_000 }],
        ],
      ]),
      nodeKeys: new Map([['uid-005', { address: keyOf('015').address, startedAt: NOW - 3_000 }]]),
    });
    await t.view.tick();
    await t.reconcile('005');
    expect(pods.calls).toEqual([{ name: 'validator-4', namespace: 'default', uid: 'uid-005' }]);
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.book.open.size).toBe(0);
  });

  it('its replacement (another uid), started in the second the key was seen, is staked', async () => {
    const pods = deletes();
    const t = setup({ ...stale, restartPod: pods.restartPod });
    await t.view.tick();
    await t.reconcile('005');
    t.desired.set('005', wanted('005', { uid: 'uid-new', startedAt: NOW }));
    await t.reconcile('005');
    expect(pods.calls).toHaveLength(1);
    expect(t.ledger.sends).toHaveLength(1);
    expect(t.book.open.get('005')).toMatchObject({ kind: 'stake', address: addr('005') });
  });

  it('a pod already gone or replaced is not counted as restarted: its replacement is judged by its own start', async () => {
    const pods = deletes('gone');
    const t = setup({ ...stale, restartPod: pods.restartPod });
    await t.view.tick();
    await t.reconcile('005');
    expect((await t.metrics.staleKeyPods.get()).values).toEqual([]);
    // The informer still shows a pod of 005 started in the key's second: judged, not trusted.
    t.desired.set('005', wanted('005', { uid: 'uid-new', startedAt: NOW }));
    await t.reconcile('005');
    expect(pods.calls.map((p) => p.uid)).toEqual(['uid-005', 'uid-new']);
    expect(t.ledger.sends).toHaveLength(0);
  });

  it('never deleted while a chain member has no Ready pod of its own or no key (its node may be the voter): reported once, deleted once that is settled', async () => {
    const pods = deletes();
    const log = capture();
    // 004 is staked, but its pod is not Ready: 005's stale node may be the one signing as 004.
    const t = setup({
      ...stale,
      desired: [
        ...['001', '002', '003'].map((id) => wanted(id)),
        wanted('004', { ready: false }),
        wanted('005', { startedAt: NOW - 3_000 }),
      ],
      restartPod: pods.restartPod,
      logger: log.logger,
    });
    await t.view.tick();
    await t.reconcile('005');
    await t.reconcile('005');
    expect(pods.calls).toEqual([]);
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.reconciler.planOne('005')).toMatchObject({ waitingFor: 'stale-key' });
    expect(t.reconciler.planOne('005')?.reason).toMatch(
      /; not restarted while chain member 004 has no Ready pod of its own: this pod's node may be signing with its key$/,
    );
    expect(t.events()).toEqual([
      expect.stringMatching(/^StaleKey: validator 005: .*chain member 004/),
    ]);
    expect((await t.metrics.staleKeyPods.get()).values).toEqual([
      expect.objectContaining({ labels: { action: 'reported' }, value: 1 }),
    ]);
    // 004's pod Ready again: the next pass deletes 005's.
    t.desired.set('004', wanted('004'));
    await t.reconcile('005');
    expect(pods.calls.map((p) => p.uid)).toEqual(['uid-005']);
  });

  it('a delete the Role forbids (403) is reported once, with the fix, not retried for that pod', async () => {
    const pods = deletes('forbidden');
    const log = capture();
    const t = setup({ ...stale, restartPod: pods.restartPod, logger: log.logger });
    await t.view.tick();
    await t.reconcile('005');
    await t.reconcile('005');
    expect(pods.calls).toHaveLength(2);
    expect(t.events()).toEqual([
      expect.stringMatching(
        /^StaleKey: validator 005: .*may not delete it \(HTTP 403\): grant the manager delete on pods, or set CM_RESTART_STALE_PODS=false$/,
      ),
    ]);
    expect(log.lines.filter((l) => l.level === 'warn' && l.validator === '005')).toHaveLength(1);
    expect(t.ledger.sends).toHaveLength(0);
  });

  it('a failed delete is thrown (the queue retries it), and tried again on the next pass', async () => {
    let fail = true;
    const calls: string[] = [];
    const t = setup({
      ...stale,
      restartPod: (pod) => {
        calls.push(pod.uid);
        return fail
          ? Promise.reject(new ManagerError('KUBE_UNAVAILABLE', 'may not delete pod validator-4'))
          : Promise.resolve('deleted');
      },
    });
    await t.view.tick();
    await expect(t.reconcile('005')).rejects.toMatchObject({ code: 'KUBE_UNAVAILABLE' });
    // Not waiting: a new block does not re-queue it; the queue's backoff paces the retry.
    expect(t.reconciler.waiting.has('005')).toBe(false);
    fail = false;
    await t.reconcile('005');
    await t.reconcile('005');
    expect(calls).toEqual(['uid-005', 'uid-005']);
  });

  it('CM_RESTART_STALE_PODS=false: reported once per uid (a Warning log line, an Event, a metric), never deleted', async () => {
    const pods = deletes();
    const log = capture();
    const t = setup({
      ...stale,
      restartPod: pods.restartPod,
      settings: { restartStalePods: false },
      logger: log.logger,
    });
    await t.view.tick();
    await t.reconcile('005');
    await t.reconcile('005');
    expect(pods.calls).toEqual([]);
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.events()).toEqual([
      expect.stringMatching(
        /^StaleKey: validator 005: pod validator-4 started before .*CM_RESTART_STALE_PODS=false/,
      ),
    ]);
    expect(log.lines.filter((l) => l.level === 'warn' && l.validator === '005')).toHaveLength(1);
    expect((await t.metrics.staleKeyPods.get()).values).toEqual([
      expect.objectContaining({ labels: { action: 'reported' }, value: 1 }),
    ]);
    // Another pod (uid) of 005, also stale, is reported once more.
    t.desired.set('005', wanted('005', { uid: 'uid-2', startedAt: NOW - 1_000 }));
    await t.reconcile('005');
    expect(t.events()).toHaveLength(2);
  });

  it('before the chain has answered, or while paused, nothing is deleted', async () => {
    const unsynced = deletes();
    const early = setup({ ...stale, restartPod: unsynced.restartPod });
    await early.reconcile('005'); // the chain view has not polled yet
    expect(unsynced.calls).toEqual([]);
    const pods = deletes();
    const t = setup({ ...stale, restartPod: pods.restartPod, paused: true });
    await t.view.tick();
    await t.reconcile('005');
    expect(pods.calls).toEqual([]);
    expect(t.reconciler.planOne('005')?.waitingFor).toBe('paused');
  });

  it('a source without pods (no restartPod): nothing is deleted or sent', async () => {
    const t = setup(stale);
    await t.view.tick();
    await t.reconcile('005');
    expect(t.ledger.sends).toHaveLength(0);
    expect(t.events()).toEqual([]);
  });
});

describe('the send fence (issue 30): a demoted leader sends nothing', () => {
  /** A leadership whose term and lease a test moves by hand. */
  function leadership(): Leadership & { term: number | undefined; holds: boolean } {
    return {
      term: 1,
      holds: true,
      mayAct() {
        return this.term !== undefined && this.holds;
      },
    };
  }

  it('a pass whose lease lapses between the journal entry and the send: NOT_LEADER, nothing sent, nothing left open; the next term sends once', async () => {
    const lead = leadership();
    const fence = new SendFence(() => lead);
    const t = setup({ adapter: (ledger) => fencedSender(ledger, fence) });
    await t.view.tick();
    // The entry is written (group commit) before the send: the lease lapses in between.
    let lapsed = false;
    t.book.onChange((r) => {
      if (r.state !== 'prepared' || lapsed) return;
      lapsed = true;
      lead.holds = false;
    });
    await expect(fence.run(() => t.reconcile('005'))).rejects.toMatchObject({
      code: 'NOT_LEADER',
    });
    expect(t.ledger.sends).toEqual([]);
    expect(t.book.open.has('005')).toBe(false); // surely not sent: not followed, never re-sent
    expect(t.book.latest.get('005')).toMatchObject({ state: 'failed', errorCode: 'NOT_LEADER' });

    lead.term = 2;
    lead.holds = true;
    await fence.run(() => t.reconcile('005'));
    await t.block();
    expect(t.ledger.sends).toHaveLength(1);
    expect(t.ledger.committedBy(addr('005'), 'MessageStake')).toHaveLength(1);
  });

  it('a pass begun in a term that ended (and a new one began) sends nothing and writes nothing', async () => {
    const lead = leadership();
    const fence = new SendFence(() => lead);
    const t = setup({ adapter: (ledger) => fencedSender(ledger, fence) });
    await t.view.tick();
    await expect(
      fence.run(() => {
        lead.term = 2; // demoted and elected again while the pass was under way
        return t.reconcile('005');
      }),
    ).rejects.toMatchObject({ code: 'NOT_LEADER', message: expect.stringMatching(/term 1/) });
    expect(t.ledger.sends).toEqual([]);
    expect(t.book.latest.has('005')).toBe(false);
  });

  it('an open action is not sent again by a replica that stopped leading', async () => {
    const lead = leadership();
    const fence = new SendFence(() => lead);
    const t = setup({ adapter: (ledger) => fencedSender(ledger, fence) });
    await t.view.tick();
    t.ledger.refuseNext = new ManagerError('CHAIN_UNAVAILABLE', 'connection reset'); // maybe sent
    await expect(fence.run(() => t.reconcile('005'))).rejects.toMatchObject({
      code: 'CHAIN_UNAVAILABLE',
    });
    expect(t.book.open.get('005')?.state).toBe('prepared');
    lead.term = undefined;
    await expect(fence.run(() => t.reconcile('005'))).rejects.toMatchObject({
      code: 'NOT_LEADER',
    });
    expect(t.ledger.sends).toEqual([]);
    expect(t.book.open.get('005')?.state).toBe('prepared'); // kept for the next leader term here
  });
});
