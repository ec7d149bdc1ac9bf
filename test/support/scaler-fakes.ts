// Fakes of the scaler's ports (no Manager, no cluster, no chain): a read model built from the
// planner's fixture, an in-memory StatefulSet behind the ReplicaTarget port, a view driver and the
// manual clock. Used by the scaler's unit tests.
import { EventEmitter } from 'node:events';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { pino } from 'pino';
import { INTENDED_CAPABILITIES } from '../../src/manager/chain/pocket/capabilities.ts';
import { quorumNow } from '../../src/manager/planner/pacing.ts';
import { plan } from '../../src/manager/planner/plan.ts';
import { addressesOf } from '../../src/manager/planner/signers.ts';
import type { KeysView, ReadModel, ReadModelEvents } from '../../src/manager/read-model.ts';
import type { ReplicaTarget } from '../../src/manager/scale/replica-target.ts';
import { Scaler } from '../../src/manager/scale/scaler.ts';
import { ManualClock } from './manual-clock.ts';
import { input, type Scenario } from './plan-fixture.ts';

/** A read model over a planner scenario the test changes as it goes. */
export function fakeRead(state: { s: Scenario; paused: boolean }): ReadModel {
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
        heldFor: (address) => keys.heldFor?.(address),
        signingKey: (address) => keys.signingKey?.(address),
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
    get capabilities() {
      return now().settings.capabilities ?? INTENDED_CAPABILITIES;
    },
    quorum: () => quorumNow(now()),
    addressesOf: (id) => addressesOf(now(), id),
    events,
  };
}

/** One StatefulSet in memory; `writes` records every replicas patch. */
export function fakeReplicas(replicas: number) {
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

export function scalerOver(state: { s: Scenario; paused: boolean }, replicas: ReplicaTarget) {
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
