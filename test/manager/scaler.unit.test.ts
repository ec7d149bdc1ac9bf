// The scaler over fakes of its ports (no Manager, no cluster, no chain): a read model built from
// the planner's fixture, an in-memory StatefulSet behind the ReplicaTarget port, a view driver and
// the manual clock. A scale-up patches the replicas under a precondition and waits until the
// planner shows the new validators staked; a paused manager and a racing writer are refused.
import { EventEmitter } from 'node:events';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../src/manager/errors.ts';
import { plan } from '../../src/manager/planner/plan.ts';
import type { KeysView, ReadModel, ReadModelEvents } from '../../src/manager/read-model.ts';
import type { ReplicaTarget } from '../../src/manager/scale/replica-target.ts';
import { Scaler, WaitFor } from '../../src/manager/scale/scaler.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { GENESIS, input, row, wanted, type Scenario } from '../support/plan-fixture.ts';

/** A read model over a planner scenario the test changes as it goes. */
function fakeRead(state: { s: Scenario; paused: boolean }): ReadModel {
  const events = new EventEmitter<ReadModelEvents>();
  const now = () => input(state.s);
  return {
    discovery: 'kubernetes',
    desired: () => now().desired,
    plan: () => plan(now()),
    planOne: (id) => plan(now()).find((d) => d.id === id),
    get keys() {
      const keys = now().keys;
      const view: KeysView = {
        loaded: true,
        get: (id) => keys.get(id),
        addressOf: (id) => keys.addressOf(id),
        idsOfAddress: (address) => keys.idsOfAddress(address),
        idOfAddress: (address) => keys.idOfAddress(address),
      };
      return view;
    },
    get chain() {
      const i = now();
      return {
        height: i.height,
        highest: i.height,
        healthy: true,
        lastError: undefined,
        lastSuccessAt: undefined,
        lastBlockTime: undefined,
        trusted: true,
        untrustedReason: undefined,
        validators: i.chain,
        signers: i.signers,
        mempool: new Map(
          [...i.mempool].map(([signer, tx]) => [signer, { ...tx, signer }] as const),
        ),
      };
    },
    get actions() {
      const i = now();
      return { open: i.open, latest: i.latest, stakeHeights: i.stakeHeights, page: () => [] };
    },
    informersSynced: () => true,
    isSynced: () => true,
    isReady: () => true,
    isLeader: true,
    leaderIdentity: undefined,
    get paused() {
      return state.paused;
    },
    trust: { trusted: true, reason: undefined },
    queueDepth: 0,
    minimumSet: () => ({ size: 0, source: 'test' }),
    baseMinimumSet: () => ({ size: 0, source: 'test' }),
    informerStatus: () => [],
    journalState: () => ({ chain: undefined, setAside: undefined }),
    events,
  };
}

/** One StatefulSet in memory; `writes` records every replicas patch. */
function fakeReplicas(replicas: number) {
  const sts = { replicas, version: 1, annotations: {} as Record<string, string> };
  const writes: { replicas: number; resourceVersion: string | undefined }[] = [];
  const podMarks: { name: string; annotation: string; value: string | null }[] = [];
  const view = (): V1StatefulSet => ({
    metadata: {
      name: 'validator',
      resourceVersion: String(sts.version),
      annotations: { ...sts.annotations },
    },
    spec: { replicas: sts.replicas } as never,
  });
  const target: ReplicaTarget = {
    scaleUnsupported: () => undefined,
    statefulSets: () => [view()],
    idOfNewPod: (_name, ordinal) => String(ordinal + 1).padStart(3, '0'),
    read: () => Promise.resolve(view()),
    patchReplicas: (_name, to, resourceVersion) => {
      writes.push({ replicas: to, resourceVersion });
      if (resourceVersion !== String(sts.version)) return Promise.resolve({ conflict: '409' });
      sts.replicas = to;
      sts.version++;
      return Promise.resolve(undefined);
    },
    annotateStatefulSet: (_name, annotations) => {
      const kept = Object.entries({ ...sts.annotations, ...annotations }).filter(
        (e): e is [string, string] => e[1] !== null,
      );
      sts.annotations = Object.fromEntries(kept);
      sts.version++;
      return Promise.resolve();
    },
    annotatePod: (name, annotation, value) => {
      podMarks.push({ name, annotation, value });
      return Promise.resolve();
    },
    confirmStatefulSet: () => Promise.resolve(),
    podExists: () => Promise.resolve(true),
  };
  return { target, sts, writes, podMarks };
}

function scalerOver(state: { s: Scenario; paused: boolean }, replicas: ReplicaTarget) {
  const clock = new ManualClock();
  const read = fakeRead(state);
  const driven = { views: 0 };
  const scaler = new Scaler({
    read,
    control: { setPaused: () => Promise.resolve(), enqueueAll: () => undefined },
    replicas,
    driver: {
      height: () => Promise.resolve(100),
      triggerView: () => {
        driven.views++;
        return Promise.resolve();
      },
      poke: () => undefined,
      blockTime: () => Promise.resolve(undefined),
    },
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { scaler, clock, read, driven };
}

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
