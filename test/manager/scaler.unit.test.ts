// The scaler over fakes of its ports (no Manager, no cluster, no chain): a read model built from
// the planner's fixture, an in-memory StatefulSet behind the ReplicaTarget port, a view driver and
// the manual clock. A scale-up patches the replicas under a precondition and waits until the
// planner shows the new validators staked; a paused manager and a racing writer are refused.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../src/manager/errors.ts';
import { WaitFor } from '../../src/manager/scale/scaler.ts';
import { GENESIS, row, wanted, type Scenario } from '../support/plan-fixture.ts';
import { fakeReplicas, scalerOver } from '../support/scaler-fakes.ts';

const request = { wait: WaitFor.staked, timeoutSeconds: 60, drive: false, force: false };
const four: Scenario = {
  keys: [...GENESIS, '005'],
  signers: GENESIS,
  chain: GENESIS.map((id) => row(id)),
  desired: GENESIS.map((id) => wanted(id)),
};

describe('Scaler over fakes of its ports', () => {
  it('scales 4 → 5: patches over the version it read, then waits until 005 is staked', async () => {
    const state = { s: four, paused: false };
    const { target, writes } = fakeReplicas(4);
    const { scaler, clock, read } = scalerOver(state, target);
    const done = scaler.scale({ ...request, replicas: 5 }, new AbortController().signal);
    await clock.advance(10);
    expect(writes).toEqual([{ replicas: 5, resourceVersion: expect.any(String) }]);
    // The pod of ordinal 4 comes, and 005 gets staked: the planner shows it, the wait ends.
    state.s = { ...four, desired: [...four.desired!, wanted('005')] };
    await clock.advance(1_000);
    expect(scaler.inFlight).toBe(true);
    state.s = { ...state.s, chain: [...four.chain!, row('005')] };
    read.events.emit('height', 101);
    const result = await done;
    expect(result).toMatchObject({ outcome: 'done', previous: 4, replicas: 5, missing: [] });
    expect(scaler.inFlight).toBe(false);
  });

  it('refuses while the manager is paused, and touches nothing', async () => {
    const { target, writes } = fakeReplicas(4);
    const { scaler } = scalerOver({ s: four, paused: true }, target);
    await expect(
      scaler.scale({ ...request, replicas: 5 }, new AbortController().signal),
    ).rejects.toMatchObject({ code: 'PAUSED' });
    expect(writes).toEqual([]);
  });

  it('never overwrites replicas someone else set meanwhile (SCALE_CONFLICT)', async () => {
    const fake = fakeReplicas(4);
    const { sts } = fake;
    const target = { ...fake.target };
    const read = (name: string): Promise<V1StatefulSet> => fake.target.read(name);
    let reads = 0;
    // The second read (just before the write) sees kubectl's 7.
    target.read = async (name) => {
      if (++reads === 2) sts.replicas = 7;
      return read(name);
    };
    const { scaler } = scalerOver({ s: four, paused: false }, target);
    const error: unknown = await scaler
      .scale({ ...request, wait: WaitFor.none, replicas: 5 }, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManagerError);
    expect(error).toMatchObject({ code: 'SCALE_CONFLICT' });
    expect(sts.replicas).toBe(7);
  });

  it('a forced scale over a drain unmarks the pods it keeps, though the pod cache has not seen their marks yet', async () => {
    // Six validators; a background drain to 4 has just marked validator-4 and validator-5 (the
    // API server holds the marks and the recorded drain; the pod cache still shows none).
    const six: Scenario = {
      keys: ['001', '002', '003', '004', '005', '006'],
      signers: GENESIS,
      chain: ['001', '002', '003', '004', '005', '006'].map((id) => row(id)),
      desired: ['001', '002', '003', '004', '005', '006'].map((id) => wanted(id)),
    };
    const fake = fakeReplicas(6);
    fake.sts.annotations = {
      'cluster-manager.dev/scale-target': '4',
      'cluster-manager.dev/scale-from': '6',
    };
    const { scaler } = scalerOver({ s: six, paused: false }, fake.target);
    const refused: unknown = await scaler
      .scale({ ...request, wait: WaitFor.none, replicas: 5 }, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'SCALE_IN_PROGRESS' });
    expect(fake.podMarks).toEqual([]);
    // Before: validator-4 kept its mark (the cache said it had none), and was unstaked.
    const result = await scaler.scale(
      { ...request, wait: WaitFor.none, replicas: 5, force: true },
      new AbortController().signal,
    );
    expect(result).toMatchObject({ outcome: 'draining', drained: ['006'] });
    const draining = 'cluster-manager.dev/draining';
    expect(fake.podMarks).toEqual([
      { name: 'validator-4', annotation: draining, value: null },
      { name: 'validator-5', annotation: draining, value: 'true' },
    ]);
    expect(fake.sts.annotations).toMatchObject({
      'cluster-manager.dev/scale-target': '5',
      'cluster-manager.dev/scale-from': '6',
    });
  });
});
