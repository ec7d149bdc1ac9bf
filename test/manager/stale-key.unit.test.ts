// A validator pod whose node started before its id's current key was seen is not staked: its node
// may hold an older key (the soak's duplicate-key race: pod validator-6 started while 007 held
// 006's key, and 007 was staked with a key no node signed with). The rule of docs/adr/0022, row by
// row, with its edges: whole-second starts, a replacement pod, a staked validator, the gates.
import { describe, expect, it } from 'vitest';
import { ChainStatus } from '../../src/manager/model.ts';
import { plan, planOne, Wait, type Decision } from '../../src/manager/planner/plan.ts';
import {
  GENESIS,
  input,
  keyOf,
  NOW,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

/** 12:00:00.400Z: when the manager saw 005's current key. */
const SEEN = NOW + 400;
/** The genesis validators, staked and signing: the chain can take one newcomer per height. */
const proven = {
  signers: GENESIS,
  chain: GENESIS.map((id) => row(id)),
  keysSeen: { '001': NOW - 3_600_000, '005': SEEN, '006': NOW - 3_600_000 },
};

function decide(s: Scenario, id: string): Decision {
  const all = plan(input(s));
  const decision = all.find((d) => d.key === id);
  if (decision === undefined) throw new Error(`no decision for ${id}`);
  // planOne (what a reconcile asks for) agrees with the whole plan.
  expect(planOne(input(s), id)).toEqual(decision);
  return decision;
}

const genesisPods = GENESIS.map((id) => wanted(id));

describe('a pod that started before its key was seen', () => {
  it('is not staked: it waits for stale-key, its reason naming both times, and is restarted', () => {
    const d = decide(
      { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })] },
      '005',
    );
    expect(d).toMatchObject({
      action: 'stake',
      waitingFor: Wait.staleKey,
      phase: 'pending',
      code: undefined,
    });
    expect(d.reason).toBe(
      'pod validator-4 started before its current key was seen (started 11:59:57Z, key seen 12:00:00.400Z): its node may hold an older key; restarting it',
    );
  });

  it('a start on another day than the key is shown with its date', () => {
    const d = decide(
      { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW - 23 * 3_600_000 })] },
      '005',
    );
    const day = new Date(NOW - 23 * 3_600_000).toISOString().slice(0, 10);
    expect(d.reason).toContain(`(started ${day}T13:00:00Z, key seen 2026-11-29T12:00:00.400Z)`);
  });

  it('a pod that started after its key was seen is staked as before', () => {
    const d = decide(
      { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW + 1_000 })] },
      '005',
    );
    expect(d).toMatchObject({ action: 'stake', waitingFor: undefined });
  });

  it('whole seconds: a start reported in the key’s own second counts as before it (one harmless restart)', () => {
    // Kubernetes says 12:00:00Z for a node that started anywhere in 12:00:00.000–.999; the key
    // was seen at .400, so the node may have read the old one.
    const sameSecond = decide(
      { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW })] },
      '005',
    );
    expect(sameSecond.waitingFor).toBe(Wait.staleKey);
    const nextSecond = decide(
      { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW + 1_000 })] },
      '005',
    );
    expect(nextSecond.waitingFor).toBeUndefined();
  });

  it('the pod the manager deleted is waited for; its replacement is staked, whatever its truncated start', () => {
    const restart = { podName: 'validator-4', uid: 'uid-old', observedAt: SEEN };
    const deleted = decide(
      {
        ...proven,
        desired: [...genesisPods, wanted('005', { uid: 'uid-old', startedAt: NOW - 3_000 })],
        staleRestarts: { '005': restart },
      },
      '005',
    );
    expect(deleted).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
    expect(deleted.reason).toMatch(/; restarted it, waiting for its replacement$/);
    // Terminating now: still the deleted pod, still waited for.
    const terminating = decide(
      {
        ...proven,
        desired: [
          ...genesisPods,
          wanted('005', { uid: 'uid-old', terminating: true, ready: false, startedAt: undefined }),
        ],
        staleRestarts: { '005': restart },
      },
      '005',
    );
    expect(terminating.waitingFor).toBe(Wait.staleKey);
    // The replacement was created after the delete, so after the key was seen: its start, in the
    // key's own second, says nothing more.
    const replacement = decide(
      {
        ...proven,
        desired: [...genesisPods, wanted('005', { uid: 'uid-new', startedAt: NOW })],
        staleRestarts: { '005': restart },
      },
      '005',
    );
    expect(replacement).toMatchObject({ action: 'stake', waitingFor: undefined });
  });

  it('a key that changed again after the restart is judged afresh', () => {
    const d = decide(
      {
        ...proven,
        desired: [...genesisPods, wanted('005', { uid: 'uid-new', startedAt: NOW })],
        keysSeen: { ...proven.keysSeen, '005': NOW + 5_000 },
        staleRestarts: { '005': { podName: 'validator-4', uid: 'uid-old', observedAt: SEEN } },
      },
      '005',
    );
    expect(d.waitingFor).toBe(Wait.staleKey);
    expect(d.reason).toMatch(/; restarting it$/);
  });

  it('with CM_RESTART_STALE_PODS=false it is only reported', () => {
    const d = decide(
      {
        ...proven,
        desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
        settings: { restartStalePods: false },
      },
      '005',
    );
    expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
    expect(d.reason).toMatch(
      /; not restarted \(CM_RESTART_STALE_PODS=false\): delete the pod to start it with the current key$/,
    );
  });

  it('takes no place in the pacing budget: the next Ready joiner goes in its stead', () => {
    const s = {
      ...proven,
      desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 }), wanted('006')],
    };
    expect(decide(s, '006')).toMatchObject({ action: 'stake', waitingFor: undefined });
    // Without the stale pod ahead of it, 006 would wait: one newcomer per height here.
    const both = { ...s, desired: [...genesisPods, wanted('005'), wanted('006')] };
    expect(decide(both, '006').waitingFor).toBe(Wait.pacing);
  });

  it('sync, an untrusted chain and pause are reported over it (no pod is deleted meanwhile)', () => {
    const s = { ...proven, desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })] };
    expect(decide({ ...s, paused: true }, '005')).toMatchObject({
      waitingFor: Wait.paused,
      reason: expect.stringMatching(/^paused; would stake: pod validator-4 started before/),
    });
    expect(decide({ ...s, synced: false }, '005').waitingFor).toBe(Wait.sync);
    expect(decide({ ...s, trust: { trusted: false, reason: 'went back' } }, '005').waitingFor).toBe(
      Wait.chainUntrusted,
    );
  });
});

describe('what the rule leaves alone', () => {
  it('a staked validator: its pod is never restarted for it (a manager start that sees every key anew restarts no voter)', () => {
    const s = {
      ...proven,
      chain: [...proven.chain, row('005')],
      signers: [...GENESIS, '005'],
      desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
    };
    expect(decide(s, '005')).toMatchObject({ action: 'none', phase: 'active' });
    // A genesis validator whose key the manager sees only now (no record): left alone too.
    expect(decide({ ...s, keysSeen: { ...s.keysSeen, '001': NOW + 60_000 } }, '001')).toMatchObject(
      { action: 'none', phase: 'active' },
    );
  });

  it("a staked validator's key rotated: its new key is not staked until its pod restarts, and its old row is never unstaked (no unstake/stake loop)", () => {
    // 005 is staked under its old key; the Secret now gives 005 another key (015's).
    const rotated = {
      signers: [...GENESIS, '005'],
      chain: [...proven.chain, row('005')],
      keys: [...GENESIS],
      extraSecretData: {
        '005': Buffer.from(keyOf('015').exportPrivateKeyHex()).toString('base64'),
      },
      keysSeen: { '005': SEEN },
    };
    const before = plan(
      input({ ...rotated, desired: [...genesisPods, wanted('005', { startedAt: NOW - 60_000 })] }),
    );
    const d005 = before.find((d) => d.id === '005');
    expect(d005).toMatchObject({
      address: keyOf('015').address,
      action: 'stake',
      waitingFor: Wait.staleKey,
    });
    // Its node may be the voter of the old row: not restarted, only reported.
    expect(d005?.reason).toMatch(
      new RegExp(
        `; not restarted while chain member ${keyOf('005').address} has no key in the Secret`,
      ),
    );
    // The old row: unmanaged, as any row no key in the Secret has — reported, never touched.
    expect(before.find((d) => d.key === keyOf('005').address)).toMatchObject({
      phase: 'unmanaged',
      action: 'none',
    });
    expect(before.filter((d) => d.action === 'unstake')).toEqual([]);
    // Its pod restarted: the old row has lost its node (a silent member, its key held by nobody),
    // so four voters of five rows carry no sixth that is not voting yet: the new key waits for
    // pacing; still nothing unstaked.
    const after = plan(
      input({ ...rotated, desired: [...genesisPods, wanted('005', { startedAt: NOW + 5_000 })] }),
    );
    expect(after.find((d) => d.id === '005')).toMatchObject({
      action: 'stake',
      waitingFor: Wait.pacing,
    });
    expect(after.filter((d) => d.action === 'unstake')).toEqual([]);
  });

  it('the genesis keys rotated: every voter waits, reported, none is restarted (a rotation must not halt the chain)', () => {
    // The reviewer's case: 001–004 staked and signing, each given a fresh key in the Secret.
    const fresh = ['011', '012', '013', '014'];
    const rotated = {
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      keys: [],
      extraSecretData: Object.fromEntries(
        GENESIS.map((id, i) => [
          id,
          Buffer.from(keyOf(fresh[i] ?? '').exportPrivateKeyHex()).toString('base64'),
        ]),
      ),
      keysSeen: Object.fromEntries(GENESIS.map((id) => [id, SEEN])),
      desired: GENESIS.map((id) => wanted(id, { startedAt: NOW - 60_000 })),
    };
    for (const id of GENESIS) {
      const d = decide(rotated, id);
      expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
      expect(d.reason).toMatch(/; not restarted while chain member [0-9a-f]{40} has no key/);
    }
  });

  it('its own address leaving the set (unstaking), no longer signing: judged, not staked, and restarted', () => {
    // The soak's halt: 008 drained (unstaking), scaled back while 008 held 003's key; its new
    // pod's node loaded 003's key, and the stake that reactivated 008 gave the chain a member no
    // node signed for. Its own address last signed long ago: no node votes with it.
    const d = decide(
      {
        ...proven,
        chain: [...proven.chain, row('005', ChainStatus.unstaking)],
        desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
      },
      '005',
    );
    expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
    expect(d.reason).toMatch(/: its node may hold an older key; restarting it$/);
  });

  it('its own address leaving the set but still signing (V1 counts every row): judged, not staked, not restarted', () => {
    const s = {
      ...proven,
      chain: [...proven.chain, row('005', ChainStatus.unstaking)],
      signers: [...GENESIS, '005'],
      desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
    };
    const d = decide(s, '005');
    expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
    expect(d.reason).toMatch(
      new RegExp(
        `; not restarted while its own address ${keyOf('005').address} is leaving the set but signed block 100: this pod's node may be the one signing$`,
      ),
    );
    // Three blocks on, it still signs as far as the chain says; four on, it no longer does.
    expect(decide({ ...s, height: 103 }, '005').reason).toMatch(/not restarted while its own/);
    expect(decide({ ...s, height: 104 }, '005').reason).toMatch(/; restarting it$/);
  });

  it("another id's leaving row with no pod counts only while it still signs (a drained validator does not hold the restart for its whole unstaking)", () => {
    // The soak's "006: wanted but pending": 008 drained (unstaking for 2016 blocks, no pod), and
    // 006's stale pod was held while 008 had "no Ready pod of its own".
    const s = {
      ...proven,
      chain: [...proven.chain, row('008', ChainStatus.unstaking)],
      desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
    };
    expect(decide(s, '005').reason).toMatch(/: its node may hold an older key; restarting it$/);
    // Still signing (a chain that keeps leaving rows in its set): this pod may be its voter.
    const signing = { ...s, signers: [...GENESIS, '008'] };
    expect(decide(signing, '005').reason).toMatch(
      /; not restarted while chain member 008 has no Ready pod of its own: this pod's node may be signing with its key$/,
    );
    // A staked member with no pod holds it whether it signs or not.
    const staked = { ...s, chain: [...proven.chain, row('008')] };
    expect(decide(staked, '005').reason).toMatch(
      /not restarted while chain member 008 has no Ready/,
    );
  });

  it('a pod not wanted, held, terminating (not deleted by the manager), not running, or with no record of its key', () => {
    const old = { startedAt: NOW - 3_000 };
    const cases: [string, Scenario][] = [
      ['not wanted', { ...proven, desired: [unwanted('005', old)] }],
      ['held', { ...proven, desired: [wanted('005', { ...old, held: true })] }],
      ['terminating', { ...proven, desired: [wanted('005', { ...old, terminating: true })] }],
      ['not running', { ...proven, desired: [wanted('005', { startedAt: undefined })] }],
      ['no record', { ...proven, keysSeen: {}, desired: [wanted('005', old)] }],
      [
        'no records at all (the rule off)',
        { signers: GENESIS, chain: proven.chain, desired: [wanted('005', old)] },
      ],
    ];
    for (const [name, s] of cases)
      expect(decide(s, '005').waitingFor, name).not.toBe(Wait.staleKey);
  });

  it('a key problem comes first: a duplicate is KEY_DUPLICATE, not stale', () => {
    const d = decide(
      {
        ...proven,
        keys: [...GENESIS],
        extraSecretData: {
          '005': Buffer.from(keyOf('001').exportPrivateKeyHex()).toString('base64'),
        },
        desired: [...genesisPods, wanted('005', { startedAt: NOW - 3_000 })],
      },
      '005',
    );
    expect(d).toMatchObject({ phase: 'failed', code: 'KEY_DUPLICATE', action: 'none' });
  });
});
