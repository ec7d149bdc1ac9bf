// Soak seed 324200 (issue 30): two extra stake+unstake pairs on 003's address and one on 002's,
// rebuilt from the soak's journal (/tmp/cm-soak-rnwBuD, actions 98–126 and 281–288).
//
// 1. Step 48 moved 003's key (K3) to 004 and back. 004's former keys keep K3. Step 54 then
//    rotated 003 to a spare key (S) and back; when 003's row K3 was staked again, 004 — whose
//    Secret key had been its own (K4) for a minute — "rotated off" K3 and unstaked 003's row
//    (action 124, reason "key rotation: the Secret gives it a new key (K4)"). A former key whose
//    address another id staked after the change is that id's row, not a rotation's.
// 2. In step 54's rotation back (Secret: 003 → K3 again), 003 staked K3 at once (action 123)
//    while its pod's node signed S, a member: a row no node signs, before S was unstaked. The
//    plan is right (first describe); the pass was not given it: the intake enqueued 003 before
//    it recorded the new key's observation, the work queue ran the pass at once, and the pass
//    saw the new key with the old observations (no former key S, no "seen" for K3): no rotation,
//    no stale key, a stake. Its stake's journal time and the key's recorded time were the same
//    millisecond (19:06:49.604, action 285).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DiscoveryListener, DiscoverySource } from '../../src/manager/discovery/port.ts';
import { KeyObservations } from '../../src/manager/keys/key-observations.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import { DesiredIntake } from '../../src/manager/parts/desired-intake.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { ActionKind, ActionState, ChainStatus } from '../../src/manager/model.ts';
import { type PlanInput } from '../../src/manager/planner/plan.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { action, input, NOW, row, wanted } from '../support/plan-fixture.ts';
import { address, b64, byId, ids, secretHistory, seen, without } from '../support/key-history.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const GENESIS_AT = NOW - 600_000;
/** Step 48: 003's key moved to 004 (003 given 009's), then undone. */
const MOVED = NOW - 60_000;
const MOVE_UNDONE = NOW - 55_000;
/** Step 54: 003 rotated to 010's key; its pod restarted onto it; rotated back. */
const ROTATED = NOW - 6_000;
const RESTARTED = NOW - 2_000;
const BACK = NOW - 100;

/** The Secret's versions: own keys (009, 010 spares), the move, the undo, the rotation, back. */
function keys(back: boolean): KeyStore {
  const own = Object.fromEntries([...ids(6), '009', '010'].map((id) => [id, b64(id)]));
  const moved = without({ ...own, '004': b64('003'), '003': b64('009') }, '009');
  const undone = { ...moved, '003': b64('003'), '004': b64('004') };
  const rotated = without({ ...undone, '003': b64('010') }, '010');
  return secretHistory(
    back
      ? [own, moved, undone, rotated, { ...rotated, '003': b64('003') }]
      : [own, moved, undone, rotated],
  );
}

/** 004's former keys after step 48: its own (K4), then K3 for five seconds. */
const FORMER_004 = [
  { address: address('004'), observedAt: GENESIS_AT, replacedAt: MOVED },
  { address: address('003'), observedAt: MOVED, replacedAt: MOVE_UNDONE },
];

function world(at: 'rotated back' | '003 staked again', nodesTell: boolean): PlanInput {
  const back = true;
  const base = input({
    desired: ids(6).map((id) =>
      wanted(id, {
        startedAt: id === '003' ? RESTARTED : GENESIS_AT,
        readySince: id === '003' ? RESTARTED + 500 : GENESIS_AT,
      }),
    ),
    keys: ids(6),
    chain: [
      ...['001', '002', '004', '005', '006'].map((id) => row(id)),
      row('010'), // S: staked by 003's rotation
      row('003', at === '003 staked again' ? ChainStatus.staked : ChainStatus.unstaking),
    ],
    signers: ['001', '002', '004', '005', '006', '010'],
    minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
    latest: [
      action('003', {
        address: at === '003 staked again' ? address('003') : address('010'),
        kind: ActionKind.stake,
        state: ActionState.committed,
        committedHeight: 99,
        createdAt: new Date(NOW - 50).toISOString(),
        updatedAt: new Date(NOW - 40).toISOString(),
      }),
    ],
  });
  // Who staked each address last (the journal's committed stakes): K3 by 004 in the move, then
  // by 003 when the move was undone (and again, in the second case, just now); S by 003.
  const stakes = new Map([
    [
      address('003'),
      {
        id: '003',
        at: at === '003 staked again' ? NOW - 40 : MOVE_UNDONE + 4_000,
        seq: at === '003 staked again' ? 123 : 108,
      },
    ],
    [address('010'), { id: '003', at: RESTARTED + 1_000, seq: 122 }],
  ]);
  return {
    ...base,
    keys: keys(back),
    lastStakes: stakes,
    keysSeen: new Map([
      ...ids(6).map((id) => [id, seen(id, GENESIS_AT)] as const),
      ['003', seen('003', BACK)],
      ['004', seen('004', MOVE_UNDONE)],
    ]),
    formerKeys: new Map([
      ['004', FORMER_004],
      [
        '003',
        [
          { address: address('009'), observedAt: MOVED, replacedAt: MOVE_UNDONE },
          { address: address('003'), observedAt: MOVE_UNDONE, replacedAt: ROTATED },
          { address: address('010'), observedAt: ROTATED, replacedAt: BACK },
        ],
      ],
    ]),
    staleRestarts: new Map([
      ['003', { podName: 'validator-2', uid: 'uid-old-003', observedAt: ROTATED }],
    ]),
    nodeKeys: nodesTell
      ? new Map([['uid-003', { address: address('010'), startedAt: RESTARTED }]])
      : new Map(),
  };
}

describe('a key rotated back while its pod signs the temporary key (soak seed 324200, step 54)', () => {
  for (const nodesTell of [true, false])
    it(`003 unstakes the temporary key first, and stakes nothing (${nodesTell ? 'the node told' : 'inferred from the starts'})`, () => {
      const three = byId(world('rotated back', nodesTell)).get('003');
      expect(three?.action, three?.reason).toBe('unstake');
      expect(three?.reason).toMatch(/key rotation/);
    });
});

describe('a former key another id staked since (soak seed 324200, action 124)', () => {
  for (const nodesTell of [true, false])
    it(`004 leaves 003's row alone (${nodesTell ? 'the node told' : 'inferred from the starts'})`, () => {
      const d = byId(world('003 staked again', nodesTell));
      const four = d.get('004');
      expect(four?.action, four?.reason).toBe('none');
      expect(four?.reason).not.toMatch(/key rotation/);
    });

  it('the same row with no stake of it in the journal is still 004’s rotation (a key moved away)', () => {
    const i = world('003 staked again', true);
    const d = byId({ ...i, lastStakes: new Map() });
    // Nothing says anyone staked K3 after 004 let go of it: the old rule stands.
    expect(d.get('004')?.reason).toMatch(/key rotation/);
  });
});

describe('the intake records a changed key before it enqueues its id (soak seed 324200, action 123)', () => {
  it('a pass started by the enqueue sees the new key as observed, and the old one as former', async () => {
    const secret = (data: Record<string, string>) =>
      keySetOfSecret({ metadata: { resourceVersion: String(Object.keys(data).length) }, data });
    let current = secret({ '003': b64('003'), '004': b64('004') });
    let listener: DiscoveryListener | undefined;
    // The discovery port, as the intake uses it: the keys it holds and a listener to call.
    const discovery = {
      start: async (l: DiscoveryListener) => {
        listener = l;
      },
      stop: async () => undefined,
      keys: () => current,
      computeDesired: () => ({ validators: new Map(), unresolvedWanted: [], problems: [] }),
      keysLabel: 'Secret validators-private-keys',
      keysTarget: () => undefined,
      events: { record: async () => undefined },
    } as unknown as DiscoverySource;
    const observations = new KeyObservations({
      store: { keyObservations: () => new Map(), recordKeyObservations: () => undefined },
      clock: { now: () => NOW } as never,
    });
    const seenAtEnqueue: { id: string; seen: string | undefined; former: string[] }[] = [];
    const intake = new DesiredIntake({
      discovery,
      keys: new KeyStore(pocketIds, pocketKeys),
      keyObservations: observations,
      clock: { now: () => NOW } as never,
      logger: pino({ level: 'silent' }),
      metrics: new Metrics(),
      journalFailed: () => undefined,
      work: {
        // The work queue runs a pass synchronously inside enqueue: what it sees is this.
        enqueue: (id) =>
          seenAtEnqueue.push({
            id,
            seen: observations.observed.get(id)?.address,
            former: (observations.former.get(id) ?? []).map((f) => f.address),
          }),
        onDesired: () => undefined,
        checkSynced: () => undefined,
        refreshPhases: () => undefined,
      },
    });
    await intake.start();
    seenAtEnqueue.length = 0;
    current = secret({ '003': b64('010'), '004': b64('004') });
    listener?.keysChanged();
    const three = seenAtEnqueue.filter((e) => e.id === '003');
    expect(three.length).toBeGreaterThan(0);
    for (const e of three) {
      expect(e.seen).toBe(address('010'));
      expect(e.former).toEqual([address('003')]);
    }
    await intake.stop();
  });
});

// The same run, action 286: 004 unstaked 002's row. In step 71 (`duplicate key`) 004 had been
// given 002's key (K2) for three seconds: both KEY_DUPLICATE, nothing done, but 004's former keys
// kept K2. Whenever no node was known to sign K2 (002's pod restarting, or 002's node on another
// key), 004 "rotated off" it. 002 had K2 first: 004 only borrowed it.
describe('a key an id borrowed from another (a duplicate) is never its rotation (soak seed 324200, action 286)', () => {
  const DUPLICATED = NOW - 30_000;
  const UNDONE = NOW - 27_000;
  function borrowed(): PlanInput {
    const own = Object.fromEntries(ids(6).map((id) => [id, b64(id)]));
    const store = secretHistory([own, { ...own, '004': b64('002') }, own]);
    const base = input({
      // 002's pod deleted and not back yet: no node is known to sign K2.
      desired: ids(6).map((id) => (id === '002' ? wanted(id, null) : wanted(id))),
      keys: ids(6),
      chain: ids(6).map((id) => row(id)),
      signers: ids(6),
      minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
    });
    return {
      ...base,
      keys: store,
      keysSeen: new Map([
        ...ids(6).map((id) => [id, seen(id, GENESIS_AT)] as const),
        ['004', seen('004', UNDONE)],
      ]),
      formerKeys: new Map([
        [
          '004',
          [
            { address: address('004'), observedAt: GENESIS_AT, replacedAt: DUPLICATED },
            { address: address('002'), observedAt: DUPLICATED, replacedAt: UNDONE },
          ],
        ],
      ]),
    };
  }

  it("004 leaves 002's row alone while 002's pod is away", () => {
    const four = byId(borrowed()).get('004');
    expect(four?.action, four?.reason).toBe('none');
    expect(four?.reason).not.toMatch(/key rotation/);
  });

  it('a key moved the other way (004 had it first, 002 got it later) is still a rotation', () => {
    const i = borrowed();
    // 002 was given K2 after 004 held it: 004's node is the one that signed it.
    const later = new Map(i.keysSeen);
    later.set('002', seen('002', UNDONE - 1_000));
    const four = byId({ ...i, keysSeen: later }).get('004');
    expect(four?.reason).toMatch(/key rotation/);
  });
});
