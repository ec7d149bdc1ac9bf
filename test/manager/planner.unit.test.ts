// The rule of docs/design.md §The rule that decides, row by row, plus its safety clauses.
import { describe, expect, it } from 'vitest';
import { pocketStake } from '../../src/manager/chain/pocket/pocket-stake.ts';
import { ActionKind, ChainStatus } from '../../src/manager/model.ts';
import {
  NEAR_HEAD_RETRY_MS,
  plan,
  planOne,
  stakeFingerprint,
  Wait,
  type Decision,
} from '../../src/manager/planner/plan.ts';
import {
  action,
  GENESIS,
  input,
  keyOf,
  NOW,
  row,
  SETTINGS,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

function decide(s: Scenario, id: string): Decision {
  const decision = plan(input(s)).find((d) => d.key === id);
  if (decision === undefined) throw new Error(`no decision for ${id}`);
  return decision;
}

const proven = { signers: GENESIS, chain: GENESIS.map((id) => row(id)) };

describe('the rule table', () => {
  it('stakes a wanted, Ready, synced validator that is absent on chain', () => {
    const d = decide(
      { ...proven, desired: [...GENESIS.map((id) => wanted(id)), wanted('005')] },
      '005',
    );
    expect(d).toMatchObject({
      action: 'stake',
      waitingFor: undefined,
      phase: 'pending',
      serviceUrl: 'v005:42069',
    });
  });

  it.each([ChainStatus.unstaking, ChainStatus.unstaked])(
    'stakes a wanted validator that is %s on chain',
    (status) => {
      const d = decide(
        { ...proven, chain: [...proven.chain, row('005', status)], desired: [wanted('005')] },
        '005',
      );
      expect(d).toMatchObject({ action: 'stake', waitingFor: undefined });
    },
  );

  it('leaves a wanted staked validator alone: staked until it signs, then active', () => {
    expect(decide({ chain: [row('001')], desired: [wanted('001')] }, '001')).toMatchObject({
      action: 'none',
      phase: 'staked',
    });
    expect(
      decide({ chain: [row('001')], desired: [wanted('001')], signers: ['001'] }, '001'),
    ).toMatchObject({ action: 'none', phase: 'active' });
  });

  it('only counts signatures after the latest stake as proof of activity', () => {
    const s = { chain: [row('005')], desired: [wanted('005')], signers: ['005'] };
    expect(decide({ ...s, stakeHeights: { '005': 100 } }, '005').phase).toBe('staked');
    expect(decide({ ...s, stakeHeights: { '005': 99 } }, '005').phase).toBe('active');
  });

  it('waits for a wanted pod that is not Ready, or not there at all, and never unstakes it', () => {
    const notReady = decide(
      { chain: [row('005')], desired: [wanted('005', { ready: false, readySince: undefined })] },
      '005',
    );
    expect(notReady).toMatchObject({ action: 'none' });
    const absentNotReady = decide(
      { desired: [wanted('005', { ready: false, readySince: undefined })] },
      '005',
    );
    expect(absentNotReady).toMatchObject({
      action: 'stake',
      waitingFor: Wait.podReady,
      phase: 'pending',
    });
    const missingPod = decide({ chain: [row('005')], desired: [wanted('005', null)] }, '005');
    expect(missingPod).toMatchObject({ action: 'none', phase: 'staked' });
  });

  it('unstakes a staked validator the cluster no longer wants', () => {
    expect(decide({ chain: [row('005')], desired: [unwanted('005')] }, '005')).toMatchObject({
      action: 'unstake',
      waitingFor: undefined,
    });
    expect(decide({ chain: [row('005')], desired: [], keys: ['005'] }, '005')).toMatchObject({
      action: 'unstake',
    });
  });

  it.each([ChainStatus.unstaking, ChainStatus.unstaked])(
    'does nothing for an unwanted validator that is %s',
    (status) => {
      expect(
        decide({ chain: [row('005', status)], desired: [unwanted('005')] }, '005'),
      ).toMatchObject({ action: 'none', phase: 'unstaked' });
    },
  );

  it('does nothing at all for a held pod, whatever the chain says', () => {
    expect(decide({ desired: [wanted('005', { held: true })] }, '005')).toMatchObject({
      action: 'none',
      phase: 'held',
    });
    expect(
      decide({ chain: [row('005')], desired: [unwanted('005', { held: true })] }, '005'),
    ).toMatchObject({ action: 'none', phase: 'held' });
  });
});

describe('what blocks an action', () => {
  it('a pending transaction: no new action until it resolves', () => {
    const d = decide({ ...proven, desired: [wanted('005')], open: [action('005')] }, '005');
    expect(d).toMatchObject({ action: 'none', phase: 'staking' });
    const u = decide(
      {
        chain: [row('005')],
        desired: [unwanted('005')],
        open: [action('005', { kind: 'unstake' })],
      },
      '005',
    );
    expect(u).toMatchObject({ action: 'none', phase: 'unstaking' });
  });

  it('a transaction of the validator in the mempool that this manager did not send', () => {
    const d = decide(
      {
        ...proven,
        desired: [wanted('005')],
        mempool: [{ id: '005', kind: ActionKind.stake }],
      },
      '005',
    );
    expect(d).toMatchObject({ action: 'none', phase: 'staking' });
  });

  it('an action committed at a height the chain view has not read: no second one (found by the soak)', () => {
    // The reconciler found the stake committed at 101 by its hash; the view's rows are of 100.
    const committed = action('005', { state: 'committed', committedHeight: 101 });
    const d = decide({ ...proven, desired: [wanted('005')], latest: [committed] }, '005');
    expect(d).toMatchObject({ action: 'none', phase: 'staking' });
    expect(d.reason).toMatch(/committed at height 101; waiting for the chain view \(at 100\)/);
    const u = decide(
      {
        chain: [row('005')],
        desired: [unwanted('005')],
        latest: [action('005', { kind: 'unstake', state: 'committed', committedHeight: 101 })],
      },
      '005',
    );
    expect(u).toMatchObject({ action: 'none', phase: 'unstaking' });
    // Once the view has read that height, the rows decide again (here: the row is absent, so a
    // stake is due — the rule does not hide a chain that undid the action).
    expect(
      decide({ ...proven, desired: [wanted('005')], latest: [committed], height: 101 }, '005'),
    ).toMatchObject({ action: 'stake', waitingFor: undefined });
  });

  it('no decision before caches and chain have synced', () => {
    expect(decide({ ...proven, desired: [wanted('005')], synced: false }, '005')).toMatchObject({
      action: 'stake',
      waitingFor: Wait.sync,
    });
  });

  it('pause: the plan still shows the action, marked paused', () => {
    const d = decide({ ...proven, desired: [wanted('005')], paused: true }, '005');
    expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.paused });
    expect(d.reason).toMatch(/^paused/);
  });

  it('the ready debounce, with the time left, for a pod that flapped (or whose source cannot tell)', () => {
    for (const flapped of [true, undefined]) {
      const d = decide(
        {
          ...proven,
          desired: [wanted('005', { readySince: NOW - 500, ...(flapped ? { flapped } : {}) })],
        },
        '005',
      );
      expect(d).toMatchObject({
        action: 'stake',
        waitingFor: Wait.debounce,
        requeueAfterMs: 1_500,
      });
    }
  });

  it('no ready debounce for a pod in its first Ready spell', () => {
    const d = decide(
      { ...proven, desired: [wanted('005', { readySince: NOW, flapped: false })] },
      '005',
    );
    expect(d.action).toBe('stake');
    expect(d.waitingFor).toBeUndefined();
  });

  it('a node that has not said its height, or is behind', () => {
    expect(decide({ ...proven, desired: [wanted('005')], nodeHeights: {} }, '005').waitingFor).toBe(
      Wait.nodeSync,
    );
    const behind = decide(
      { ...proven, desired: [wanted('005')], nodeHeights: { '005': 90 } },
      '005',
    );
    expect(behind.waitingFor).toBe(Wait.nodeSync);
    expect(behind.reason).toContain('height 90, chain 100');
    // Far behind: asked again at the reconciler's usual pace; a block or two short of the
    // tolerance (1 by default): asked again soon.
    expect(behind.requeueAfterMs).toBeUndefined();
    for (const height of [96, 97])
      expect(
        decide({ ...proven, desired: [wanted('005')], nodeHeights: { '005': height } }, '005')
          .requeueAfterMs,
      ).toBe(height === 97 ? NEAR_HEAD_RETRY_MS : undefined);
    expect(
      decide({ ...proven, desired: [wanted('005')], nodeHeights: { '005': 99 } }, '005').waitingFor,
    ).toBeUndefined();
    expect(
      decide(
        { ...proven, desired: [wanted('005')], nodeHeights: {}, settings: { syncCheck: false } },
        '005',
      ).waitingFor,
    ).toBeUndefined();
  });

  it('reports pause (and sync, trust) over its own wait for the node or the debounce', () => {
    // Paused, a Ready pod whose node is a few blocks behind says "paused", with the node's wait
    // after it: not a reason that each new block makes come and go (a flaky report in CI).
    const behind = decide(
      { ...proven, desired: [wanted('005')], nodeHeights: { '005': 97 }, paused: true },
      '005',
    );
    expect(behind.waitingFor).toBe(Wait.paused);
    expect(behind.reason).toMatch(/^paused; would stake: node of pod .* is syncing/);
    const notSynced = decide(
      { ...proven, desired: [wanted('005')], nodeHeights: { '005': 97 }, synced: false },
      '005',
    );
    expect(notSynced.waitingFor).toBe(Wait.sync);
  });

  it('unstakes wait while a wanted pod has not told its id yet (annotation mapping)', () => {
    const d = decide(
      { chain: [row('005')], desired: [unwanted('005')], unresolvedWanted: ['validator-2'] },
      '005',
    );
    expect(d).toMatchObject({ action: 'unstake', waitingFor: Wait.podIds });
  });

  it("a stake's fingerprint carries the chain's own text of the stake, Pocket's as before", () => {
    const key = keyOf('005');
    // The format of fingerprints written before stakes became data (journals hold them).
    expect(
      stakeFingerprint(
        key,
        { ...SETTINGS, stake: pocketStake('150000000001', ['0001', '0021']) },
        'v005:42069',
      ),
    ).toBe(`stake|${key.publicKeyHex}|150000000001|0001,0021|v005:42069`);
    // Another chain's stake: whatever it writes, as it writes it.
    const toy = { amount: '50', denomination: 'utoy', fields: {}, inputs: '50 utoy', shown: '' };
    expect(stakeFingerprint(key, { ...SETTINGS, stake: toy }, 'u')).toBe(
      `stake|${key.publicKeyHex}|50 utoy|u`,
    );
  });

  it('a terminal failure holds until the inputs change', () => {
    const fingerprint = stakeFingerprint(keyOf('005'), SETTINGS, 'v005:42069');
    const failed = action('005', {
      state: 'failed',
      terminal: true,
      fingerprint,
      errorCode: 'INSUFFICIENT_FUNDS',
      error: 'cannot pay',
    });
    expect(decide({ ...proven, desired: [wanted('005')], latest: [failed] }, '005')).toMatchObject({
      action: 'none',
      phase: 'failed',
    });
    const moved = decide(
      { ...proven, desired: [wanted('005', { serviceUrl: 'elsewhere:1' })], latest: [failed] },
      '005',
    );
    expect(moved).toMatchObject({ action: 'stake', waitingFor: undefined });
    const retryable = { ...failed, terminal: false };
    expect(decide({ ...proven, desired: [wanted('005')], latest: [retryable] }, '005').action).toBe(
      'stake',
    );
  });
});

describe('keys', () => {
  it('a wanted validator without a key is failed (KEY_MISSING) and nothing is sent', () => {
    const d = decide({ ...proven, desired: [wanted('005')], keys: GENESIS }, '005');
    expect(d).toMatchObject({ action: 'none', phase: 'failed', code: 'KEY_MISSING' });
    expect(d.reason).toMatch(/^KEY_MISSING/);
  });

  it('a key is not called missing before the caches have synced (the Secret may not be read yet)', () => {
    // Before: a starting manager logged KEY_MISSING for every genesis validator, then read 32 keys.
    const d = decide({ ...proven, desired: [wanted('001')], keys: [], synced: false }, '001');
    expect(d).toMatchObject({ action: 'none', phase: 'pending', code: undefined });
    expect(d.waitingFor).toBe(Wait.sync);
  });

  it('a malformed key is failed (KEY_INVALID) and the others carry on', () => {
    const s: Scenario = {
      ...proven,
      desired: [wanted('005'), wanted('006')],
      keys: [...GENESIS, '006'],
      extraSecretData: { '005': Buffer.from('zz').toString('base64') },
    };
    expect(decide(s, '005')).toMatchObject({ action: 'none', phase: 'failed' });
    expect(decide(s, '005').reason).toMatch(/^KEY_INVALID/);
    expect(decide(s, '005').code).toBe('KEY_INVALID');
    expect(decide(s, '006').code).toBeUndefined();
    expect(decide(s, '006')).toMatchObject({ action: 'stake', waitingFor: undefined });
  });

  it('a staked validator with no key is unmanaged and never touched', () => {
    const stranger = {
      address: 'ee'.repeat(20),
      status: ChainStatus.staked,
      stakedAmount: '1',
      unstakingHeight: -1,
      serviceUrl: '',
    };
    const decisions = plan(
      input({
        ...proven,
        chain: [...proven.chain, stranger],
        desired: GENESIS.map((id) => wanted(id)),
      }),
    );
    expect(decisions.find((d) => d.key === stranger.address)).toMatchObject({
      action: 'none',
      phase: 'unmanaged',
    });
  });

  it('an id claimed by two pods is reported and not acted on', () => {
    const d = decide(
      { ...proven, desired: [{ ...wanted('005'), conflict: 'id 005 is claimed by a and b' }] },
      '005',
    );
    expect(d).toMatchObject({ action: 'none', phase: 'failed' });
  });
});

describe('consensus-safe pacing', () => {
  const wantedTen = Array.from({ length: 10 }, (_, i) => wanted(String(i + 1).padStart(3, '0')));
  const stakes = (s: Scenario) =>
    plan(input(s))
      .filter((d) => d.action === 'stake' && d.waitingFor === undefined)
      .map((d) => d.id);

  it('lets fewer than half the proven set join at once: 4 → 5 → 7 → 10', () => {
    expect(stakes({ ...proven, desired: wantedTen })).toEqual(['005']);
    // 005 staked but not signing yet: nobody else may join.
    const five = [...GENESIS, '005'];
    expect(
      stakes({ signers: GENESIS, chain: five.map((id) => row(id)), desired: wantedTen }),
    ).toEqual([]);
    // 005 signs: 5 proven, 2 may join.
    expect(stakes({ signers: five, chain: five.map((id) => row(id)), desired: wantedTen })).toEqual(
      ['006', '007'],
    );
    const seven = [...five, '006', '007'];
    expect(
      stakes({ signers: seven, chain: seven.map((id) => row(id)), desired: wantedTen }),
    ).toEqual(['008', '009', '010']);
  });

  it('counts pending stakes against the budget and explains the wait', () => {
    const decisions = plan(input({ ...proven, desired: wantedTen, open: [action('005')] }));
    expect(decisions.filter((d) => d.action === 'stake' && d.waitingFor === undefined)).toEqual([]);
    expect(decisions.find((d) => d.id === '006')).toMatchObject({ waitingFor: Wait.pacing });
    expect(decisions.find((d) => d.id === '006')?.reason).toMatch(
      /pacing: 1 validator\(s\) joining or silent in a set of 5 with 4 voting/,
    );
  });

  it('does not count a leaving validator as proven: its vote goes with it', () => {
    // 005 signs but is no longer wanted (its unstake is on its way): 4 proven stay, 1 may join.
    const five = [...GENESIS, '005'];
    const desired = [...wantedTen.slice(0, 4), unwanted('005'), ...wantedTen.slice(5, 8)];
    expect(stakes({ signers: five, chain: five.map((id) => row(id)), desired })).toEqual(['006']);
    // The same with its unstake already in the journal.
    expect(
      stakes({
        signers: five,
        chain: five.map((id) => row(id)),
        desired,
        open: [action('005', { kind: 'unstake' })],
      }),
    ).toEqual(['006']);
  });

  it('does not limit removals: every unwanted validator is unstaked at once', () => {
    const ten = wantedTen.map((d) => d.id);
    const decisions = plan(
      input({
        signers: ten,
        chain: ten.map((id) => row(id)),
        desired: wantedTen.map((d, i) => (i < 4 ? d : unwanted(d.id))),
      }),
    );
    expect(
      decisions
        .filter((d) => d.action === 'unstake' && d.waitingFor === undefined)
        .map((d) => d.id),
    ).toEqual(['005', '006', '007', '008', '009', '010']);
  });

  it('can be switched off', () => {
    expect(stakes({ ...proven, desired: wantedTen, settings: { pacing: 'off' } })).toHaveLength(6);
  });
});

describe('a hold by a failed block hook', () => {
  const wantedTen = Array.from({ length: 10 }, (_, i) => wanted(String(i + 1).padStart(3, '0')));
  const hold = (id: string, kind: 'stake' | 'unstake') =>
    new Map([[id, { kind, reason: `HOOK_FAILED: ${kind} held by pre-${kind} hook "gate"` }]]);

  it('holds only its own validator: it takes no place in the pacing budget', () => {
    const held = { ...input({ ...proven, desired: wantedTen }), hookHolds: hold('005', 'stake') };
    const decisions = plan(held);
    expect(decisions.find((d) => d.id === '005')).toMatchObject({
      action: 'stake',
      waitingFor: Wait.hook,
      reason: 'HOOK_FAILED: stake held by pre-stake hook "gate"',
    });
    expect(decisions.find((d) => d.id === '006')).toMatchObject({ waitingFor: undefined });
    expect(planOne(held, '006')?.waitingFor).toBeUndefined();
    expect(planOne(held, '005')?.waitingFor).toBe(Wait.hook);
  });

  it('gives way to a pause, an unsynced manager and an untrusted chain (no hook runs then)', () => {
    const base = { ...proven, desired: wantedTen };
    for (const [s, wait] of [
      [{ paused: true }, Wait.paused],
      [{ synced: false }, Wait.sync],
      [{ trust: { trusted: false, reason: 'went back' } }, Wait.chainUntrusted],
    ] as const) {
      const held = { ...input({ ...base, ...s }), hookHolds: hold('005', 'stake') };
      expect(plan(held).find((d) => d.id === '005')?.waitingFor).toBe(wait);
      expect(planOne(held, '005')?.waitingFor).toBe(wait);
    }
  });

  it('holds an unstake, which then does not count as leaving for the minimum set', () => {
    const five = [...GENESIS, '005'];
    const held = {
      ...input({
        signers: five,
        chain: five.map((id) => row(id)),
        desired: [...GENESIS.map((id) => wanted(id)), unwanted('005')],
      }),
      hookHolds: hold('005', 'unstake'),
    };
    expect(planOne(held, '005')).toMatchObject({ action: 'unstake', waitingFor: Wait.hook });
    // A hold of the other kind does not apply.
    expect(
      planOne({ ...held, hookHolds: hold('005', 'stake') }, '005')?.waitingFor,
    ).toBeUndefined();
  });
});
