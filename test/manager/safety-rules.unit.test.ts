// The safety rules above every row of the decision table (docs/design.md §Safety rules): the
// minimum validator set, key problems, an untrusted chain, and pacing that counts
// every silent member and lets a set of one or two grow. Pure: the planner on built inputs.
import { describe, expect, it } from 'vitest';
import { ActionKind, ChainStatus } from '../../src/manager/model.ts';
import {
  quorumOf,
  resolveMinimumSet,
  splitByMinimumSet,
} from '../../src/manager/planner/minimum-set.ts';
import { pacingBudget } from '../../src/manager/planner/pacing.ts';
import { plan, planOne, Wait, type Decision } from '../../src/manager/planner/plan.ts';
import {
  action,
  GENESIS,
  input,
  keyOf,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));
const unstakesNow = (s: Scenario) =>
  plan(input(s))
    .filter((d) => d.action === 'unstake' && d.waitingFor === undefined)
    .map((d) => d.id);
const stakesNow = (s: Scenario) =>
  plan(input(s))
    .filter((d) => d.action === 'stake' && d.waitingFor === undefined)
    .map((d) => d.id);
function decision(s: Scenario, id: string): Decision {
  const found = plan(input(s)).find((d) => d.key === id);
  if (found === undefined) throw new Error(`no decision for ${id}`);
  // What a reconcile of that id decides is the same.
  expect(planOne(input(s), id)).toEqual(found);
  return found;
}

describe('the minimum validator set', () => {
  it('defaults to a quorum (more than two thirds) of the genesis set', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 10].map(quorumOf)).toEqual([0, 1, 2, 3, 3, 4, 5, 5, 7]);
    expect(resolveMinimumSet({ configured: 'auto', genesisCount: 4, forced: undefined })).toEqual({
      size: 3,
      source: 'a quorum of the 4 genesis validator(s)',
    });
    expect(
      resolveMinimumSet({ configured: 'auto', genesisCount: undefined, forced: undefined }),
    ).toBeUndefined();
    expect(resolveMinimumSet({ configured: 2, genesisCount: 4, forced: undefined })?.size).toBe(2);
    // A forced scale lowers it, never raises it.
    expect(resolveMinimumSet({ configured: 'auto', genesisCount: 4, forced: 0 })?.size).toBe(0);
    expect(resolveMinimumSet({ configured: 2, genesisCount: 4, forced: 3 })?.size).toBe(2);
    expect(
      resolveMinimumSet({ configured: 'auto', genesisCount: undefined, forced: 1 })?.size,
    ).toBe(1);
  });

  it('scale 0: keeps the minimum staked, reported held BELOW_MINIMUM_SET, unstakes the rest', () => {
    const six = ids(6);
    const s: Scenario = {
      signers: six,
      chain: six.map((id) => row(id)),
      desired: six.map((id) => unwanted(id)),
      minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
    };
    // The highest ids go first (as the StatefulSet removes them); the lowest three stay.
    expect(unstakesNow(s)).toEqual(['004', '005', '006']);
    const kept = decision(s, '001');
    expect(kept).toMatchObject({ action: 'unstake', waitingFor: Wait.minimumSet, phase: 'held' });
    expect(kept.reason).toMatch(/^BELOW_MINIMUM_SET: below the minimum set/);
    expect(kept.code).toBe('BELOW_MINIMUM_SET');
    expect(kept.reason).toContain('minimum of 3 (a quorum of the 4 genesis validator(s))');
  });

  it('counts unstakes already on their way, and lets a silent validator go before a voter', () => {
    const five = ids(5);
    const s: Scenario = {
      signers: ['001', '002', '003', '005'], // 004 never signed: it is not voting
      chain: five.map((id) => row(id)),
      desired: [
        ...ids(2).map((id) => wanted(id)),
        ...['003', '004', '005'].map((id) => unwanted(id)),
      ],
      minimumSet: { size: 3, source: 'test' },
    };
    expect(unstakesNow(s)).toEqual(['004', '005']);
    // 005's unstake already sent: only one more may go, and it is the silent 004.
    expect(unstakesNow({ ...s, open: [action('005', { kind: 'unstake' })] })).toEqual(['004']);
    expect(decision({ ...s, open: [action('005', { kind: 'unstake' })] }, '003').phase).toBe(
      'held',
    );
    // A mempool unstake this manager did not send counts the same.
    expect(unstakesNow({ ...s, mempool: [{ id: '004', kind: ActionKind.unstake }] })).toEqual([
      '005',
    ]);
  });

  it('a deleted StatefulSet (no validator wanted, pods gone) keeps the minimum too', () => {
    const four = GENESIS;
    const s: Scenario = {
      signers: four,
      chain: four.map((id) => row(id)),
      desired: four.map((id) => ({ ...unwanted(id, null), statefulSet: undefined })),
      minimumSet: { size: 3, source: 'test' },
    };
    expect(unstakesNow(s)).toEqual(['004']);
  });

  it('unstakes nothing while the minimum is not known yet (genesis not read)', () => {
    const s: Scenario = {
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      desired: [...ids(3).map((id) => wanted(id)), unwanted('004')],
      minimumSet: undefined,
    };
    expect(unstakesNow(s)).toEqual([]);
    expect(decision(s, '004').reason).toMatch(
      /BELOW_MINIMUM_SET: the minimum set is not known yet/,
    );
    expect(decision(s, '004').code).toBe('MINIMUM_SET_UNKNOWN');
  });

  it('is no limit above the minimum: a scale-down that keeps enough goes out at once', () => {
    const ten = ids(10);
    expect(
      unstakesNow({
        signers: ten,
        chain: ten.map((id) => row(id)),
        desired: ten.map((id, i) => (i < 4 ? wanted(id) : unwanted(id))),
        minimumSet: { size: 3, source: 'test' },
      }),
    ).toEqual(['005', '006', '007', '008', '009', '010']);
  });

  it('splitByMinimumSet: deterministic order, and nothing allowed without a minimum', () => {
    const base = input({ signers: GENESIS, chain: GENESIS.map((id) => row(id)) });
    const candidates = GENESIS.map((id) => ({ id, address: keyOf(id).address }));
    const split = splitByMinimumSet({ ...base, minimumSet: { size: 2, source: 't' } }, candidates);
    expect([...split.allowed]).toEqual(['004', '003']);
    expect([...split.held].sort()).toEqual(['001', '002']);
    const unknown = splitByMinimumSet({ ...base, minimumSet: undefined }, candidates);
    expect(unknown.allowed.size).toBe(0);
  });
});

describe('key problems', () => {
  it('the same key under two ids: KEY_DUPLICATE on both, and neither is staked or unstaked', () => {
    const shared = b64(keyOf('001').exportPrivateKeyHex());
    const s: Scenario = {
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      desired: [...GENESIS.map((id) => wanted(id)), wanted('005')],
      keys: ['002', '003', '004'],
      extraSecretData: { '001': shared, '005': shared },
    };
    for (const id of ['001', '005']) {
      const d = decision(s, id);
      expect(d).toMatchObject({ action: 'none', phase: 'failed' });
      expect(d.reason).toMatch(/^KEY_DUPLICATE: key "\d{3}" is the same key as/);
    }
    // Both show the shared row's state on chain.
    expect(decision(s, '005').chainStatus).toBe('staked');
    expect(decision(s, '001').chainStatus).toBe('staked');
    // 001's row is attributed to 001 (not shown as unmanaged), and nothing else changes.
    expect(plan(input(s)).filter((d) => d.phase === 'unmanaged')).toEqual([]);
    // 005 unwanted while its key is 001's: still no unstake of 001's row.
    expect(
      unstakesNow({ ...s, desired: [...GENESIS.map((id) => wanted(id)), unwanted('005')] }),
    ).toEqual([]);
  });
});

describe('a chain that is not trusted', () => {
  it('defers every action, unstakes and stakes alike, naming CHAIN_UNTRUSTED', () => {
    const s: Scenario = {
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      desired: [...ids(3).map((id) => wanted(id)), unwanted('004'), wanted('005')],
      trust: {
        trusted: false,
        reason: "the chain's height went back to 100 after 929 had been seen",
      },
    };
    const decisions = plan(input(s));
    expect(decisions.filter((d) => d.action !== 'none' && d.waitingFor === undefined)).toEqual([]);
    for (const id of ['004', '005']) {
      const d = decision(s, id);
      expect(d.waitingFor).toBe(Wait.chainUntrusted);
      expect(d.reason).toMatch(/^CHAIN_UNTRUSTED: the chain's height went back to 100 after 929/);
    }
  });
});

describe('pacing counts every silent member', () => {
  const chainOf = (list: string[]) => list.map((id) => row(id));

  it('a set of one or two grows one synced validator at a time', () => {
    // Before: the BFT budget was 0 at one or two voters, so such a set could never grow again.
    expect(
      stakesNow({
        signers: ['001'],
        chain: chainOf(['001']),
        desired: ids(3).map((id) => wanted(id)),
      }),
    ).toEqual(['002']);
    expect(
      stakesNow({
        signers: ids(2),
        chain: chainOf(ids(2)),
        desired: ids(4).map((id) => wanted(id)),
      }),
    ).toEqual(['003']);
    // One joining already: the next waits until it votes.
    expect(
      stakesNow({
        signers: ['001'],
        chain: chainOf(ids(2)),
        desired: ids(3).map((id) => wanted(id)),
      }),
    ).toEqual([]);
    // The newcomer's node must be synced first.
    expect(
      stakesNow({
        signers: ['001'],
        chain: chainOf(['001']),
        desired: ids(2).map((id) => wanted(id)),
        nodeHeights: { '002': 50 },
      }),
    ).toEqual([]);
    // No voter at all: nothing joins.
    expect(
      stakesNow({ signers: [], chain: chainOf(['001']), desired: ids(2).map((id) => wanted(id)) }),
    ).toEqual([]);
  });

  it('a staked validator whose pod is gone, or that stopped signing, counts against the margin', () => {
    const desired = ids(6).map((id) => wanted(id));
    // 4 voting: one may join.
    expect(stakesNow({ signers: GENESIS, chain: chainOf(GENESIS), desired })).toEqual(['005']);
    // 004's pod is not Ready: 3 voting among 4 members: none may join (a silent joiner stalls it).
    const podGone = [
      ...desired.slice(0, 3),
      wanted('004', { ready: false, readySince: undefined }),
      ...desired.slice(4),
    ];
    expect(stakesNow({ signers: GENESIS, chain: chainOf(GENESIS), desired: podGone })).toEqual([]);
    // 004 last signed 30 heights ago (window 20): the same.
    const s = input({ signers: GENESIS, chain: chainOf(GENESIS), desired });
    const stale = new Map(s.signers);
    stale.set(keyOf('004').address, 70);
    expect(pacingBudget({ ...s, signers: stale })).toMatchObject({
      voting: 3,
      members: 4,
      budget: 0,
    });
    // An unmanaged staked row that never signed is a silent member as well.
    const foreign = row('015');
    const withForeign = input({
      signers: GENESIS,
      chain: [...chainOf(GENESIS), foreign],
      desired,
      keys: ids(6),
    });
    expect(pacingBudget(withForeign)).toMatchObject({ voting: 4, members: 5, budget: 0 });
  });

  it('matches the BFT bound: k newcomers only while voters > 2/3 of members + k', () => {
    for (let voting = 0; voting <= 12; voting++) {
      for (let silent = 0; silent <= 6; silent++) {
        const members = voting + silent;
        const k = Math.max(0, Math.floor((3 * voting - 2 * members - 1) / 2));
        if (k > 0) expect(3 * voting).toBeGreaterThan(2 * (members + k));
        expect(3 * voting > 2 * (members + k + 1)).toBe(false);
      }
    }
  });
});

describe('unchanged rows still decide as before', () => {
  it('a row with status unstaking is not counted as staked for the minimum', () => {
    const s: Scenario = {
      signers: GENESIS,
      chain: [...ids(3).map((id) => row(id)), row('004', ChainStatus.unstaking), row('005')],
      desired: [...ids(3).map((id) => unwanted(id)), unwanted('004'), unwanted('005')],
      minimumSet: { size: 3, source: 'test' },
    };
    // 4 staked (001–003, 005): one may go, the silent-free highest: 005.
    expect(unstakesNow(s)).toEqual(['005']);
  });
});
