// Phase bookkeeping in one place (phase-tracker.ts): the changes between two plans, the gauges a
// plan sets, and the planner's own reading of the chain that the scaler waits on (staked under its
// own key, signing) — also where the phase shows something else first.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/manager/metrics.ts';
import { ActionKind, ChainStatus } from '../../src/manager/model.ts';
import { PhaseTracker, setPlanGauges } from '../../src/manager/phase-tracker.ts';
import { isStakedOnChain, plan, type Decision } from '../../src/manager/planner/plan.ts';
import {
  action,
  GENESIS,
  input,
  pod,
  row,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

function decisions(s: Scenario): Map<string, Decision> {
  return new Map(plan(input(s)).map((d) => [d.key, d]));
}

const four: Scenario = {
  signers: GENESIS,
  chain: GENESIS.map((id) => row(id)),
  desired: GENESIS.map((id) => wanted(id)),
};

describe('PhaseTracker', () => {
  it('reports each change once, then the validators no longer planned, with their ids', () => {
    const tracker = new PhaseTracker();
    const first = tracker.observe([...decisions(four).values()]);
    expect(first.map((c) => [c.key, c.from, c.to])).toEqual(
      GENESIS.map((id) => [id, undefined, 'active']),
    );
    expect(tracker.observe([...decisions(four).values()])).toEqual([]);
    expect(tracker.phaseOf('002')).toBe('active');

    const three = [...decisions(four).values()].filter((d) => d.key !== '004');
    const staked = three.map((d) => (d.key === '003' ? { ...d, phase: 'staked' as const } : d));
    expect(tracker.observe(staked)).toEqual([
      { key: '003', id: '003', from: 'active', to: 'staked', reason: staked[2]!.reason },
      { key: '004', id: '004', from: 'active', to: 'unstaked', reason: 'no longer tracked' },
    ]);
    expect(tracker.has('004')).toBe(false);
  });

  it('keeps the id a key had, whatever the id looks like (no id format here)', () => {
    const tracker = new PhaseTracker();
    const [d] = [...decisions(four).values()];
    tracker.observe([{ ...d!, key: 'validator-a', id: 'validator-a' }]);
    expect(tracker.observe([])).toMatchObject([{ key: 'validator-a', id: 'validator-a' }]);
  });
});

describe('setPlanGauges', () => {
  it('counts phases, staked + active, and NO_STATE_SYNC by state', async () => {
    const metrics = new Metrics();
    const d = [...decisions(four).values()];
    const silent = { ...d[0]!, phase: 'staked' as const, code: 'NO_STATE_SYNC' as const };
    const refused = { ...d[1]!, phase: 'pending' as const, code: 'NO_STATE_SYNC' as const };
    setPlanGauges(metrics, [silent, refused, d[2]!, d[3]!]);
    const text = await metrics.registry.metrics();
    expect(text).toContain('cluster_manager_validator_phase{phase="active"} 2');
    expect(text).toMatch(/cluster_manager_validators\{view="staked"\} 3/);
    expect(text).toMatch(/cluster_manager_validators\{view="active"\} 2/);
    expect(text).toMatch(/cannot_vote\{state="staked"\} 1/);
    expect(text).toMatch(/cannot_vote\{state="refused"\} 1/);
  });
});

describe("the planner's chain reading (what a scale waits on)", () => {
  it('is staked and signing although the phase shows an open unstake or a hold', () => {
    const s: Scenario = {
      ...four,
      desired: [...GENESIS.slice(0, 3).map((id) => wanted(id)), wanted('004', { held: true })],
      open: [action('003', { kind: ActionKind.unstake })],
    };
    const d = decisions(s);
    expect(d.get('004')).toMatchObject({ phase: 'held', signing: true });
    expect(isStakedOnChain(d.get('004')!)).toBe(true);
    expect(d.get('003')).toMatchObject({ phase: 'unstaking', signing: true });
    expect(isStakedOnChain(d.get('003')!)).toBe(true);
  });

  it('is not staked for a row that is not staked, nor signing before the first signature', () => {
    const d = decisions({
      signers: GENESIS.slice(0, 3),
      chain: [...GENESIS.slice(0, 3).map((id) => row(id)), row('004', ChainStatus.unstaking)],
      desired: [...GENESIS.map((id) => wanted(id)), wanted('005', pod('005'))],
    });
    expect(isStakedOnChain(d.get('004')!)).toBe(false);
    expect(d.get('004')?.signing).toBe(false);
    expect(isStakedOnChain(d.get('005')!)).toBe(false);
  });
});
