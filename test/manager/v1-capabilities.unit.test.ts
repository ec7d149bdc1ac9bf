// The planner on a chain with two of V1's capabilities (CM_CHAIN_PROFILE=v1): late joiners never
// vote (no state sync) and every row ever staked counts in the quorum — here with the leader's own
// vote counted, as a chain that has only those two flaws does (V1's third, the leader's vote that
// never counts, is v1-quorum.unit.test.ts). With four genesis voters one late joiner fits (4 of 5
// > 2/3), a second would halt the chain: it is refused at once with NO_STATE_SYNC (pod Ready or
// not), an unstaked late joiner still counts, the node sync check is not waited on, and the same
// input on the intended chain behaves as before.
import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/manager/chain/pocket/capabilities.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import { pacingBudget } from '../../src/manager/planner/pacing.ts';
import { NO_STATE_SYNC, plan, planOne, Wait } from '../../src/manager/planner/plan.ts';
import { findBlocker } from '../../src/manager/scale/scale-blockers.ts';
import { GENESIS, input, row, wanted, unwanted, type Scenario } from '../support/plan-fixture.ts';

const V1 = { capabilities: { ...capabilitiesOf('v1'), leaderVoteCounts: true } };
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

function decisions(s: Scenario) {
  const i = input({ ...s, settings: { ...V1, ...s.settings } });
  const all = plan(i);
  // planOne agrees with plan for every id.
  for (const d of all) if (d.id !== undefined) expect(planOne(i, d.id)).toEqual(d);
  return new Map(all.map((d) => [d.key, d]));
}

describe('pacing on a chain without state sync (V1)', () => {
  it('scale 5 from 4 genesis voters: 005 is staked without waiting for its node to sync', () => {
    const d = decisions({
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      desired: ids(5).map((id) => wanted(id)),
      // 005's node stays at genesis on V1: the sync check would wait for ever.
      nodeHeights: { ...Object.fromEntries(GENESIS.map((id) => [id, 100])), '005': 0 },
    });
    expect(d.get('005')).toMatchObject({ action: 'stake', waitingFor: undefined });
    expect(d.get('005')?.reason).toMatch(/no state sync: it joins as a member that never votes/);
  });

  it('the intended chain waits for that node to sync', () => {
    const i = input({
      signers: GENESIS,
      chain: GENESIS.map((id) => row(id)),
      desired: ids(5).map((id) => wanted(id)),
      nodeHeights: { ...Object.fromEntries(GENESIS.map((id) => [id, 100])), '005': 0 },
    });
    expect(planOne(i, '005')).toMatchObject({ action: 'stake', waitingFor: Wait.nodeSync });
  });

  it('scale 7 from 4: 005 may go, 006 and 007 are refused with NO_STATE_SYNC, pods Ready or not', () => {
    const desired = [
      ...ids(5).map((id) => wanted(id)),
      wanted('006', { ready: false, readySince: undefined }),
      wanted('007', null),
    ];
    const d = decisions({ signers: GENESIS, chain: GENESIS.map((id) => row(id)), desired });
    expect(d.get('005')).toMatchObject({ action: 'stake', waitingFor: undefined });
    for (const id of ['006', '007']) {
      expect(d.get(id)).toMatchObject({ waitingFor: Wait.noStateSync, phase: 'pending' });
      expect(d.get(id)?.reason.startsWith(NO_STATE_SYNC)).toBe(true);
    }
    // On the intended chain 006 and 007 only wait (for their pods, then pacing).
    const intended = plan(
      input({ signers: GENESIS, chain: GENESIS.map((id) => row(id)), desired }),
    );
    expect(intended.filter((x) => x.waitingFor === Wait.noStateSync)).toEqual([]);
  });

  it('005 staked and silent: status says it cannot vote; 006 refused; a scale answers at once', () => {
    const d = decisions({
      signers: GENESIS,
      chain: ids(5).map((id) => row(id)),
      stakeHeights: { '005': 90 },
      desired: ids(6).map((id) => wanted(id)),
    });
    expect(d.get('005')).toMatchObject({ phase: 'staked', action: 'none' });
    expect(d.get('005')?.reason.startsWith(NO_STATE_SYNC)).toBe(true);
    expect(d.get('005')?.code).toBe('NO_STATE_SYNC');
    expect(d.get('006')).toMatchObject({ waitingFor: Wait.noStateSync, code: 'NO_STATE_SYNC' });
    const missing = ['005', '006'].map((id) => ({
      id,
      phase: d.get(id)!.phase,
      code: d.get(id)!.code,
      reason: d.get(id)!.reason,
    }));
    expect(
      findBlocker({
        paused: false,
        drive: true,
        missing,
        now: 0,
        quietSince: 0,
        blockGapMs: undefined,
      }),
    ).toMatchObject({ code: 'NO_STATE_SYNC' });
  });

  it('an unstaked late joiner still counts in the quorum: nothing may join after scale 4', () => {
    const chain = [...GENESIS.map((id) => row(id)), row('005', ChainStatus.unstaked)];
    const s = input({ signers: GENESIS, chain, desired: ids(4).map((id) => wanted(id)) });
    expect(pacingBudget({ ...s, settings: { ...s.settings, ...V1 } })).toMatchObject({
      voting: 4,
      members: 5,
      budget: 0,
      ceiling: 0,
    });
    // The intended chain forgets the row: one may join again.
    expect(pacingBudget(s)).toMatchObject({ members: 4, budget: 1 });
    const d = decisions({
      signers: GENESIS,
      chain,
      desired: [...ids(4).map((id) => wanted(id)), unwanted('005')],
    });
    expect(d.get('005')?.reason).toMatch(/still counts in the quorum/);
    expect(
      decisions({ signers: GENESIS, chain, desired: ids(5).map((id) => wanted(id)) }).get('005'),
    ).toMatchObject({ waitingFor: Wait.noStateSync });
  });

  it('a set of one or two does not grow by a newcomer that would never vote', () => {
    const d = decisions({
      signers: ['001'],
      chain: [row('001')],
      desired: ids(2).map((id) => wanted(id)),
    });
    expect(d.get('002')).toMatchObject({ waitingFor: Wait.noStateSync });
    const intended = plan(
      input({ signers: ['001'], chain: [row('001')], desired: ids(2).map((id) => wanted(id)) }),
    );
    expect(intended.find((x) => x.id === '002')).toMatchObject({ waitingFor: undefined });
  });

  it('a genesis voter that is down makes the joiner wait (pacing), not refuse for good', () => {
    const desired = [
      ...ids(3).map((id) => wanted(id)),
      wanted('004', { ready: false, readySince: undefined }),
      ...['005', '006'].map((id) => wanted(id)),
    ];
    const d = decisions({ signers: GENESIS, chain: GENESIS.map((id) => row(id)), desired });
    expect(d.get('005')).toMatchObject({ waitingFor: Wait.pacing });
    expect(d.get('006')).toMatchObject({ waitingFor: Wait.noStateSync });
  });
});
