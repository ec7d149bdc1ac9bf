// Addresses as the unit of safety (issue 30): quorum, signatures and drains belong to the address a
// node signs with, not to the id whose key the Secret holds today. Each of the issue's
// reproductions as a rule on built inputs (the planner, the drain's leave rule, the preStop
// departure, the scaler over fakes of its ports); the devnet versions are in
// test/integration/addresses.test.ts. And key rotation as a planned sequence: the old address is
// unstaked with the old key held in memory, the pod restarts, the new address is staked; a row
// whose key nobody holds is ORPHANED, never a voter; a chain that cannot carry it refuses it.
import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/manager/chain/pocket/capabilities.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { ChainStatus, type DesiredValidator, type ValidatorId } from '../../src/manager/model.ts';
import {
  plan,
  planOne,
  staleRestartBlocker,
  Wait,
  type Decision,
  type PlanInput,
} from '../../src/manager/planner/plan.ts';
import { addressesOf } from '../../src/manager/planner/signers.ts';
import type { ActionsView, ChainSnapshot } from '../../src/manager/read-model.ts';
import { validatorStatuses } from '../../src/manager/status.ts';
import { departureOf } from '../../src/manager/scale/departure.ts';
import { leaveState } from '../../src/manager/scale/scale-rules.ts';
import { isStuck } from '../../src/manager/scale/scale-blockers.ts';
import { WaitFor } from '../../src/manager/scale/scaler.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import {
  action,
  input,
  keyOf,
  NOW,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';
import { fakeReplicas, scalerOver } from '../support/scaler-fakes.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));
const b64 = (id: string) => Buffer.from(keyOf(id).exportPrivateKeyHex()).toString('base64');
/** When the Secret changed (the manager saw the new keys then). */
const CHANGED = NOW - 10_000;
/** When every pod's node started: before the change. */
const STARTED = NOW - 60_000;

interface Keys {
  /** id → the fixture id whose key the Secret gives it now (its own when absent). */
  now?: Record<ValidatorId, ValidatorId | null>;
  /** The manager saw the Secret before the change (it holds the old keys in memory). */
  sawBefore?: boolean;
  /** id → the fixture id whose key its pod's node says it signs with. */
  nodes?: Record<ValidatorId, ValidatorId> | undefined;
}

/** A plan input after a key change: the Secret's keys, the former keys, what the nodes say. */
function changed(s: Scenario, k: Keys, all: ValidatorId[]): PlanInput {
  const base = input({ ...s, keys: all });
  const secret = (which: 'old' | 'new') =>
    Object.fromEntries(
      all.flatMap((id) => {
        const to = which === 'old' ? id : k.now?.[id] === undefined ? id : k.now[id];
        return to === null ? [] : [[id, b64(to)]];
      }),
    );
  const store = new KeyStore(pocketIds, pocketKeys);
  if (k.sawBefore !== false)
    store.update(keySetOfSecret({ metadata: { resourceVersion: '1' }, data: secret('old') }));
  store.update(keySetOfSecret({ metadata: { resourceVersion: '2' }, data: secret('new') }));
  // A removed key (null) names no key a node could load: its id's last observation stands and no
  // former key is recorded (keys/key-observations.ts `observe`), as in the manager.
  const rotated = Object.entries(k.now ?? {})
    .filter(([, to]) => to !== null)
    .map(([id]) => id);
  const keysSeen = new Map(
    all.map((id) => {
      const to = k.now?.[id] ?? id;
      return [
        id,
        {
          address: keyOf(to).address,
          observedAt: rotated.includes(id) ? CHANGED : STARTED - 3_600_000,
        },
      ];
    }),
  );
  const formerKeys = new Map(
    rotated.map((id) => [
      id,
      [{ address: keyOf(id).address, observedAt: STARTED - 3_600_000, replacedAt: CHANGED }],
    ]),
  );
  const nodeKeys = new Map(
    Object.entries(k.nodes ?? {}).map(([id, signs]) => [
      `uid-${id}`,
      { address: keyOf(signs).address, startedAt: STARTED },
    ]),
  );
  return { ...base, keys: store, keysSeen, formerKeys, nodeKeys };
}

/** Pods started before the key change (their nodes hold what the Secret had then). */
const early = (id: ValidatorId): DesiredValidator => wanted(id, { startedAt: STARTED });
const earlyGone = (id: ValidatorId): DesiredValidator => unwanted(id, { startedAt: STARTED });

function decisions(i: PlanInput): Map<string, Decision> {
  const all = plan(i);
  for (const d of all) if (d.id !== undefined) expect(planOne(i, d.id)).toEqual(d);
  return new Map(all.map((d) => [d.key, d]));
}

const seven = ids(7);
const sevenActive: Scenario = {
  signers: seven,
  chain: seven.map((id) => row(id)),
  minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
};
const fresh = { '005': '015', '006': '016', '007': '017' };

describe('reproduction 1: rotated keys, then a scale-down', () => {
  it('the drain judges the address the node signs with: 005–007 have not left while their old rows are staked', () => {
    for (const nodes of [{ '005': '005', '006': '006', '007': '007' }, undefined]) {
      // Told by the nodes, or inferred from the start times (the pods started before the change).
      const i = changed(
        {
          ...sevenActive,
          desired: [...ids(4).map(early), ...['005', '006', '007'].map(earlyGone)],
        },
        { now: fresh, nodes },
        seven,
      );
      const view = {
        keys: i.keys,
        chain: i.chain,
        open: i.open,
        mempool: i.mempool,
        addressesOf: (id: ValidatorId) => addressesOf(i, id),
      };
      for (const id of ['005', '006', '007']) {
        expect(addressesOf(i, id)).toEqual([keyOf(id).address]);
        expect(leaveState(view, id)).toMatchObject({ left: false, keyProblem: undefined });
      }
      // The plan unstakes the three old addresses, each signed with the old key held in memory.
      const d = decisions(i);
      for (const id of ['005', '006', '007']) {
        expect(d.get(id)).toMatchObject({
          action: 'unstake',
          waitingFor: undefined,
          subject: keyOf(id).address,
          address: keyOf(fresh[id as keyof typeof fresh]).address,
        });
        expect(d.get(id)?.reason).toMatch(/^key rotation: the Secret gives it a new key/);
        expect(d.get(id)?.fingerprint).toBe(`unstake|${keyOf(id).publicKeyHex}`);
        // The old rows are the rotation's, not "unmanaged".
        expect(d.has(keyOf(id).address)).toBe(false);
      }
    }
  });

  it('the scaler does not answer done with the pods removed: it drains the old addresses first', async () => {
    const state = {
      s: { ...sevenActive, desired: seven.map(early) } as Scenario,
      paused: false,
    };
    const { target, writes, podMarks } = fakeReplicas(7);
    const { scaler, clock, read } = scalerOver(state, target);
    // The fake read model plans over `input(s)`; give it the rotated world.
    const world = (s: Scenario) =>
      changed(s, { now: fresh, nodes: { '005': '005', '006': '006', '007': '007' } }, [
        ...seven,
        '015',
        '016',
        '017',
      ]);
    Object.defineProperty(read, 'keys', { get: () => world(state.s).keys });
    read.plan = () => plan(world(state.s));
    read.addressesOf = (id) => addressesOf(world(state.s), id);
    const done = scaler.scale(
      { replicas: 4, wait: WaitFor.staked, timeoutSeconds: 30, drive: false, force: false },
      new AbortController().signal,
    );
    await clock.advance(2_000);
    // The leaving pods are marked, and the replicas stay at 7 while the old rows are staked.
    expect(podMarks.map((m) => m.name).sort()).toEqual([
      'validator-4',
      'validator-5',
      'validator-6',
    ]);
    expect(writes).toEqual([]);
    await clock.advance(30_000);
    expect(await done).toMatchObject({ outcome: 'timeout' });
    expect(writes).toEqual([]);
  });
});

describe('reproduction 2: a rotated key the manager did not see, then kubectl scale 0', () => {
  it('the orphaned row is never counted in the minimum set: only 004 leaves, not 003', () => {
    // 001–005 staked; 005's key changed while the manager was down: its old row has no key.
    const five = ids(5);
    const i = changed(
      {
        signers: five,
        chain: five.map((id) => row(id)),
        desired: five.map(earlyGone),
        minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
      },
      { now: { '005': '015' }, sawBefore: false },
      five,
    );
    const d = decisions(i);
    const unstakes = [...d.values()].filter(
      (x) => x.action === 'unstake' && x.waitingFor === undefined,
    );
    expect(unstakes.map((x) => x.id)).toEqual(['004']);
    expect(d.get('003')).toMatchObject({ waitingFor: Wait.minimumSet, phase: 'held' });
    // The old row is reported ORPHANED, with the arithmetic and the way out.
    const orphan = d.get(keyOf('005').address);
    expect(orphan).toMatchObject({ phase: 'unmanaged', code: 'ORPHANED', action: 'none' });
    expect(orphan?.reason).toMatch(/^ORPHANED: row [0-9a-f]{40} \(005's key until /);
    expect(orphan?.reason).toMatch(/no rule counts it as a voter/);
    expect(orphan?.reason).toMatch(/\d+ rows need \d+ votes; \d+ voters give \d+/);
    expect(orphan?.reason).toMatch(/The way out: put that key back in the Secret/);
    // 005 itself: it cannot be rotated (nobody holds the old key).
    expect(d.get('005')).toMatchObject({ phase: 'failed', code: 'ORPHANED' });
  });

  it('pacing counts the orphaned row as silent: four voters of five rows take no newcomer', () => {
    const five = ids(5);
    const i = changed(
      {
        signers: five,
        chain: five.map((id) => row(id)),
        desired: [...ids(4).map(early), unwanted('005', null), wanted('006', { startedAt: NOW })],
      },
      { now: { '005': '015' }, sawBefore: false },
      ids(6),
    );
    expect(decisions(i).get('006')).toMatchObject({ action: 'stake', waitingFor: Wait.pacing });
  });
});

describe('reproduction 3: keys moved to other ids, then the stale-key restart', () => {
  // 001–006 staked; paused; scaled to 8 (007 and 008 started with their own keys); the keys of
  // 005/006 moved to 007/008, and 005/006 given unused keys.
  const eight = ids(8);
  const moved = { '005': '015', '006': '016', '007': '005', '008': '006' };
  const nodes = { '005': '005', '006': '006', '007': '007', '008': '008' };
  const world = (k: Partial<Keys> = {}) =>
    changed(
      {
        signers: ids(6),
        chain: ids(6).map((id) => row(id)),
        desired: eight.map(early),
        minimumSet: { size: 3, source: 't' },
      },
      { now: moved, nodes, ...k },
      eight,
    );

  it("the pods that sign for the moved keys are not deleted: the rows' only signers", () => {
    for (const i of [world(), world({ nodes: {} })]) {
      for (const id of ['005', '006'])
        expect(staleRestartBlocker(id, i)).toMatch(
          /^its node signs with [0-9a-f]{40}, staked on chain/,
        );
      // 007's pod would load 005's key while validator-4 still signs with it: not yet either.
      expect(staleRestartBlocker('007', i)).toMatch(
        /two nodes would sign with one key|only signer/,
      );
    }
  });

  it('the silent ids are not shown active: 007 and 008 are staked under keys their own nodes do not hold', () => {
    const d = decisions(world());
    for (const id of ['007', '008']) {
      expect(d.get(id)?.phase).not.toBe('active');
      expect(d.get(id)?.signing).toBe(false);
      expect(d.get(id)?.reason).toMatch(/the node of its pod validator-\d signs with [0-9a-f]{40}/);
    }
    // 005 and 006 rotate: their old addresses are unstaked first, signed with the keys the Secret
    // now holds under 007 and 008.
    for (const id of ['005', '006'])
      expect(d.get(id)).toMatchObject({ action: 'unstake', subject: keyOf(id).address });
  });
});

describe('key rotation as a planned sequence', () => {
  const four = ids(4);
  const base = (chain = four.map((id) => row(id)), desired = four.map(early)): Scenario => ({
    signers: ids(5),
    chain: [...chain, row('005')],
    desired: [...desired, early('005')],
    minimumSet: { size: 3, source: 't' },
  });
  const all = ids(5);

  it('1. the old address is unstaked with the old key held in memory', () => {
    const d = decisions(changed(base(), { now: { '005': '015' }, nodes: { '005': '005' } }, all));
    expect(d.get('005')).toMatchObject({
      action: 'unstake',
      subject: keyOf('005').address,
      fingerprint: `unstake|${keyOf('005').publicKeyHex}`,
      phase: 'active',
    });
  });

  it('   …and the status row names the old address its phase is about, not the new one', () => {
    // stale-key.test.ts waited for "active under the new address" and got it at once, while the
    // old row was still being unstaked: the row showed the new address with the old one's phase.
    const i = changed(base(), { now: { '005': '015' }, nodes: { '005': '005' } }, all);
    const rows = validatorStatuses({
      desired: () => i.desired,
      plan: () => plan(i),
      chain: { validators: i.chain, signers: i.signers } as unknown as ChainSnapshot,
      actions: { latest: new Map() } as unknown as ActionsView,
    });
    expect(rows.find((r) => r.id === '005')).toMatchObject({
      address: keyOf('005').address,
      phase: 'active',
      chain: { status: 'staked' },
    });
  });

  it('   …and while it is on its way nothing else is done; once out, 2. the pod restarts', () => {
    const sent = changed(
      { ...base(), open: [action('005', { kind: 'unstake', address: keyOf('005').address })] },
      { now: { '005': '015' }, nodes: { '005': '005' } },
      all,
    );
    expect(decisions(sent).get('005')).toMatchObject({ phase: 'unstaking', action: 'none' });
    const out = changed(
      {
        ...base(),
        chain: [...four.map((id) => row(id)), row('005', ChainStatus.unstaking)],
        signers: four,
      },
      { now: { '005': '015' }, nodes: { '005': '005' } },
      all,
    );
    const d = decisions(out).get('005');
    expect(d).toMatchObject({ action: 'stake', waitingFor: Wait.staleKey });
    expect(d?.reason).toMatch(
      /signs with [0-9a-f]{40}, not with its current key \(the node says so\); restarting it$/,
    );
    expect(staleRestartBlocker('005', out)).toBeUndefined();
  });

  it('3. the restarted node says it holds the new key: the new address is staked', () => {
    const restarted = changed(
      {
        ...base(),
        chain: [...four.map((id) => row(id)), row('005', ChainStatus.unstaking)],
        desired: [...four.map(early), wanted('005', { startedAt: NOW, uid: 'uid-005b' })],
      },
      { now: { '005': '015' } },
      all,
    );
    const d = decisions({
      ...restarted,
      nodeKeys: new Map([['uid-005b', { address: keyOf('015').address, startedAt: NOW }]]),
    }).get('005');
    expect(d).toMatchObject({
      action: 'stake',
      waitingFor: undefined,
      address: keyOf('015').address,
    });
  });

  it('the old key unknown (the manager started after the change): ORPHANED, nothing sent, the pod kept', () => {
    const i = changed(
      base(),
      { now: { '005': '015' }, sawBefore: false, nodes: { '005': '005' } },
      all,
    );
    const d = decisions(i);
    expect(d.get('005')).toMatchObject({ action: 'none', phase: 'failed', code: 'ORPHANED' });
    expect(staleRestartBlocker('005', i)).toMatch(/only signer/);
    // Its departure (a kubectl scale-down) is held, never final: it is that row's only signer.
    const gone = changed(
      { ...base(), desired: [...four.map(early), earlyGone('005')] },
      { now: { '005': '015' }, sawBefore: false, nodes: { '005': '005' } },
      all,
    );
    const entry = gone.desired.validators.get('005');
    const answer = departureOf({
      pod: 'validator-4',
      entry: entry?.pod === undefined ? undefined : { ...entry, pod: entry.pod },
      decision: plan(gone).find((x) => x.id === '005'),
      view: {
        keys: gone.keys,
        chain: gone.chain,
        open: gone.open,
        mempool: gone.mempool,
        addressesOf: (id) => addressesOf(gone, id),
      },
      paused: false,
      trust: { trusted: true, reason: undefined },
      chainHealthy: true,
      height: 100,
      othersLeaving: false,
    });
    expect(answer).toMatchObject({ code: 'ORPHANED', final: false, departed: false });
  });

  it('a key moved to another id is unstaked with the key the Secret now holds under that id', () => {
    const i = changed(
      base(),
      { now: { '005': '015', '006': '005' }, sawBefore: false, nodes: { '005': '005' } },
      [...all, '006'],
    );
    expect(decisions(i).get('005')).toMatchObject({
      action: 'unstake',
      subject: keyOf('005').address,
    });
  });

  it('a key removed from the Secret: unstaked with the held key once its validator is not wanted', () => {
    const wantedStill = changed(base(), { now: { '005': null }, nodes: { '005': '005' } }, all);
    expect(decisions(wantedStill).get('005')).toMatchObject({
      action: 'none',
      code: 'KEY_MISSING',
      // Its row, not "absent": `status` shows the staked row its node still signs for.
      subject: keyOf('005').address,
    });
    expect(decisions(wantedStill).get('005')?.reason).toBe(
      `KEY_MISSING: no key "005" in the keys Secret; its row ${keyOf('005').address} is staked on chain (the manager holds its old key in memory: a scale-down past it unstakes it)`,
    );
    const leaving = changed(
      { ...base(), desired: [...four.map(early), earlyGone('005')] },
      { now: { '005': null }, nodes: { '005': '005' } },
      all,
    );
    // Sent now: the minimum set counts its old row as leaving (a removal records no former key, so
    // the rows being rotated out must be found from the held key too). Before, the row was held
    // "below the minimum set" with 5 voters for a minimum of 3, and stayed staked for good.
    expect(decisions(leaving).get('005')).toMatchObject({
      action: 'unstake',
      waitingFor: undefined,
      subject: keyOf('005').address,
      fingerprint: `unstake|${keyOf('005').publicKeyHex}`,
    });
    expect(decisions(leaving).get('005')?.reason).toMatch(
      /^key rotation: its key was removed from the Secret; .* then its pod may go$/,
    );
  });

  /** The preStop departure of 005's pod (validator-4) in `i`, with its leave state. */
  function departure005(i: PlanInput) {
    const entry = i.desired.validators.get('005');
    const view = {
      keys: i.keys,
      chain: i.chain,
      open: i.open,
      mempool: i.mempool,
      addressesOf: (id: ValidatorId) => addressesOf(i, id),
    };
    const answer = departureOf({
      pod: 'validator-4',
      entry: entry?.pod === undefined ? undefined : { ...entry, pod: entry.pod },
      decision: plan(i).find((x) => x.id === '005'),
      view,
      paused: false,
      trust: { trusted: true, reason: undefined },
      chainHealthy: true,
      height: 100,
      othersLeaving: false,
    });
    return { state: leaveState(view, '005'), answer };
  }

  it('the departure of a pod whose removed key is held waits for its unstake (LEAVING)', () => {
    const removed = { now: { '005': null }, nodes: { '005': '005' } };
    const gone = () =>
      changed({ ...base(), desired: [...four.map(early), earlyGone('005')] }, removed, all);
    // Before: KEY_MISSING, final at once: a kubectl scale-down let the pod go while its row was
    // staked (the planner's unstake with the held key not committed yet), the row's last signer.
    const { state, answer } = departure005(gone());
    expect(state).toMatchObject({ left: false, keyProblem: undefined });
    expect(!state.left && state.reason).toMatch(
      /^its key was removed from the Secret, and its address [0-9a-f]{40} is still staked on chain: it is unstaked with the key held in memory first$/,
    );
    expect(answer).toMatchObject({ code: 'LEAVING', final: false, departed: false });
    expect(answer.reason).toMatch(/^key rotation: its key was removed from the Secret; .*/);
    // Its unstake sent and in the mempool: still not final.
    const sent = gone();
    const pending = departure005({
      ...sent,
      mempool: new Map([
        [keyOf('005').address, { hash: 'ab'.repeat(32), kind: 'unstake', signer: '' }],
      ]),
    });
    expect(pending.answer).toMatchObject({ final: false, departed: false });
    // Committed (the row is unstaking, out of the set): the pod may go.
    const left = changed(
      {
        ...base(),
        chain: [...four.map((id) => row(id)), row('005', ChainStatus.unstaking)],
        desired: [...four.map(early), earlyGone('005')],
      },
      removed,
      all,
    );
    expect(departure005(left).answer).toMatchObject({
      code: 'LEFT_SET',
      final: true,
      departed: true,
    });
  });

  it('the scaler drains past a removed key it holds; with the whole Secret deleted it refuses, nothing moved', async () => {
    const state = { s: base(), paused: false };
    const world = () => changed(state.s, { now: { '005': null }, nodes: { '005': '005' } }, all);
    const scale = async (keys: PlanInput['keys'], force: boolean) => {
      const { target, writes, podMarks } = fakeReplicas(5);
      const { scaler, clock, read } = scalerOver(state, target);
      Object.defineProperty(read, 'keys', { get: () => keys });
      read.plan = () => plan({ ...world(), keys });
      read.addressesOf = (id) => addressesOf({ ...world(), keys }, id);
      const answer = scaler
        .scale(
          { replicas: 4, wait: WaitFor.none, timeoutSeconds: 10, drive: false, force },
          new AbortController().signal,
        )
        .catch((e: unknown) => e);
      await clock.advance(1_000);
      return { answer: await answer, writes, podMarks };
    };
    // One key removed (the Secret is there): drained like any staked row — before, 409 KEY_MISSING.
    const one = await scale(world().keys, false);
    expect(one.answer).toMatchObject({ outcome: 'draining', drained: ['005'] });
    expect(one.podMarks.map((m) => m.name)).toEqual(['validator-4']);
    expect(one.writes).toEqual([]);
    // The whole Secret deleted: every key is missing, the held ones too would be acted on with
    // no Secret giving them. Refused, named, before anything moves; forced, it drains.
    const deleted = new KeyStore(pocketIds, pocketKeys);
    deleted.update(
      keySetOfSecret({
        metadata: { resourceVersion: '1' },
        data: Object.fromEntries(all.map((id) => [id, b64(id)])),
      }),
    );
    deleted.update(undefined);
    expect(deleted.absent).toBe(true);
    const refused = await scale(deleted, false);
    expect(refused.answer).toMatchObject({ code: 'KEY_MISSING' });
    expect((refused.answer as Error).message).toMatch(
      /^cannot scale down to 4: the keys Secret is absent \(deleted\?\).*Put the Secret back, or send force: true/,
    );
    expect(refused.podMarks).toEqual([]);
    expect(refused.writes).toEqual([]);
    const forced = await scale(deleted, true);
    expect(forced.answer).toMatchObject({ outcome: 'draining', drained: ['005'] });
  });

  it('a removed key nobody holds stays final: KEY_MISSING when its address was never seen, ORPHANED when the journal knows it', () => {
    // The manager started after the removal: it never held the key.
    const unseen = changed(
      { ...base(), desired: [...four.map(early), earlyGone('005')] },
      { now: { '005': null }, sawBefore: false },
      all,
    );
    const never = departure005({ ...unseen, keysSeen: new Map(), formerKeys: new Map() });
    expect(never.state).toMatchObject({ left: false, keyProblem: 'KEY_MISSING' });
    expect(never.answer).toMatchObject({ code: 'KEY_MISSING', final: true, departed: false });
    // The journal kept its address: the row is known staked and nobody can unstake it (ADR 0029).
    const known = departure005(unseen);
    expect(known.state).toMatchObject({ left: false, keyProblem: 'ORPHANED' });
    expect(known.answer).toMatchObject({ code: 'ORPHANED', final: false });
  });

  it('on a chain that keeps every row and whose late joiners never vote (V1) it is refused', () => {
    const i = changed(
      { ...base(), settings: { capabilities: capabilitiesOf('v1') } },
      { now: { '005': '015' }, nodes: { '005': '005' } },
      all,
    );
    const d = decisions(i).get('005');
    expect(d).toMatchObject({ action: 'none', code: 'ROTATION_REFUSED' });
    expect(d?.reason).toMatch(
      /6 rows with 4 voters: 6 rows need 5 votes besides the leader's; 4 voters give 3/,
    );
  });

  it('a key moved between two of four genesis validators does not deadlock (soak seed 730411)', () => {
    // 002 := 003's key, 003 := 015's. 003's old address was unstaked first (its key is in the
    // Secret under 002); its pod restarted on 015's key. 002's old row (its key held in memory) still
    // votes, and the minimum set keeps it until a new voter joins: pacing must let 003's new key
    // in, counting that row as a leaving voter. Before, pacing did not see the held key, counted the
    // row as a silent member (3 members, 2 voting) and held 003 for good: a deadlock.
    const i = changed(
      {
        signers: ['001', '002', '004'],
        chain: [row('001'), row('002'), row('003', ChainStatus.unstaking), row('004')],
        desired: [
          early('001'),
          early('002'),
          wanted('003', { startedAt: NOW, uid: 'uid-003b' }),
          early('004'),
        ],
        minimumSet: { size: 3, source: 't' },
      },
      { now: { '002': '003', '003': '015' }, nodes: { '002': '002' } },
      four,
    );
    const d = decisions({
      ...i,
      nodeKeys: new Map([
        ...i.nodeKeys!,
        ['uid-003b', { address: keyOf('015').address, startedAt: NOW }],
      ]),
    });
    expect(d.get('002')).toMatchObject({ action: 'unstake', waitingFor: Wait.minimumSet });
    expect(d.get('003')).toMatchObject({ action: 'stake', waitingFor: undefined });
  });

  it('a key moved to a higher id goes out from its old owner first (soak seed 28461)', () => {
    // 004 := 001's key, 001 := 015's. Two rotations, a minimum of 3 of 4 voters: one at a time.
    // 004's cannot finish first: its pod may restart onto 001's key only once 001's node no longer
    // signs with it, that is once 001's rotation is done. Before, the minimum set let the higher
    // id go first (004: 4 − 1 = 3 voters ≥ 3) and then held 001 (3 − 1 = 2 < 3) for good, while
    // 004 waited on 001: a deadlock, found by the soak.
    const i = changed(
      {
        signers: four,
        chain: four.map((id) => row(id)),
        desired: four.map(early),
        minimumSet: { size: 3, source: 't' },
      },
      { now: { '004': '001', '001': '015' }, nodes: { '001': '001', '004': '004' } },
      four,
    );
    const d = decisions(i);
    expect(d.get('001')).toMatchObject({
      action: 'unstake',
      subject: keyOf('001').address,
      waitingFor: undefined,
    });
    expect(d.get('004')).toMatchObject({
      action: 'unstake',
      subject: keyOf('004').address,
      waitingFor: Wait.minimumSet,
      code: undefined,
      phase: 'active',
    });
    // Its turn comes: a scale waiting for it is not told SCALE_BLOCKED (it was: held, "stuck").
    const held = d.get('004')!;
    expect(isStuck({ id: '004', phase: held.phase, code: held.code, reason: held.reason })).toBe(
      false,
    );
    expect(held.reason).toMatch(
      /its key rotation waits for 001's: its new key .* is 001's old one/,
    );
    // 001's old row on its way out and its pod restarted on 015's key: 001's new address is
    // staked; 004 waits until it votes (3 − 1 = 2 < 3).
    const next = changed(
      {
        signers: ['002', '003', '004'],
        chain: [row('001', ChainStatus.unstaking), row('002'), row('003'), row('004')],
        desired: [
          wanted('001', { startedAt: NOW, uid: 'uid-001b' }),
          early('002'),
          early('003'),
          early('004'),
        ],
        minimumSet: { size: 3, source: 't' },
      },
      { now: { '004': '001', '001': '015' }, nodes: { '004': '004' } },
      four,
    );
    const then = decisions({
      ...next,
      nodeKeys: new Map([
        ...next.nodeKeys!,
        ['uid-001b', { address: keyOf('015').address, startedAt: NOW }],
      ]),
    });
    expect(then.get('001')).toMatchObject({ action: 'stake', waitingFor: undefined });
    expect(then.get('004')).toMatchObject({ action: 'unstake', waitingFor: Wait.minimumSet });
  });

  it('a key moved to a higher id waits for the old owner even with voters to spare (soak seed 245363)', () => {
    // 004 := 002's key, 002 := 015's, seven voters: the minimum set lets both go at once, and
    // 004's went first — then a scale to 4 took the voters 002 needed (3 − 1 = 2 < 3), and 004
    // waited on 002 for good. 004's old address now waits for 002's to be out, whatever the count.
    const i = changed(
      {
        signers: seven,
        chain: seven.map((id) => row(id)),
        desired: seven.map(early),
        minimumSet: { size: 3, source: 't' },
      },
      { now: { '004': '002', '002': '015' }, nodes: { '002': '002', '004': '004' } },
      seven,
    );
    const d = decisions(i);
    expect(d.get('002')).toMatchObject({ action: 'unstake', waitingFor: undefined });
    expect(d.get('004')).toMatchObject({
      action: 'unstake',
      subject: keyOf('004').address,
      waitingFor: Wait.minimumSet,
    });
    expect(d.get('004')?.reason).toMatch(/waits for 002's/);
  });

  it('a rotation with no more validators wanted than the minimum is held, and says the way out', () => {
    const three = ids(3);
    const i = changed(
      {
        signers: three,
        chain: three.map((id) => row(id)),
        desired: three.map(early),
        minimumSet: { size: 3, source: 't' },
      },
      { now: { '003': '013' }, nodes: { '001': '001', '002': '002', '003': '003' } },
      three,
    );
    const d = decisions(i).get('003');
    expect(d).toMatchObject({
      action: 'unstake',
      waitingFor: Wait.minimumSet,
      phase: 'held',
      code: 'BELOW_MINIMUM_SET',
    });
    expect(d?.reason).toMatch(
      /cannot go on: .* 2 staked validator\(s\) that vote, fewer than the minimum of 3/,
    );
    expect(d?.reason).toMatch(/The way out: scale to 4 until the rotation is done/);
  });

  it('a rotation of every genesis key is paced by the minimum set: one old address at a time', () => {
    const i = changed(
      {
        signers: four,
        chain: four.map((id) => row(id)),
        desired: four.map(early),
        minimumSet: { size: 3, source: 't' },
      },
      {
        now: { '001': '011', '002': '012', '003': '013', '004': '014' },
        nodes: { '001': '001', '002': '002', '003': '003', '004': '004' },
      },
      four,
    );
    const d = [...decisions(i).values()];
    expect(
      d.filter((x) => x.action === 'unstake' && x.waitingFor === undefined).map((x) => x.id),
    ).toEqual(['004']);
    expect(
      d
        .filter((x) => x.waitingFor === Wait.minimumSet)
        .map((x) => x.id)
        .sort(),
    ).toEqual(['001', '002', '003']);
  });
});

describe('a scale-up to an id whose key another running node signs with', () => {
  it('is refused before anything changes: the new pod would sign with it a second time', async () => {
    // 002's key moved to 005 (no pod yet); 002's pod still signs with it (it says so).
    const four = ids(4);
    const state = {
      s: { signers: four, chain: four.map((id) => row(id)), desired: four.map(early) } as Scenario,
      paused: false,
    };
    const world = () =>
      changed(state.s, { now: { '002': '006', '005': '002' }, nodes: { '002': '002' } }, ids(5));
    const { target, writes } = fakeReplicas(4);
    const { scaler, read } = scalerOver(state, target);
    Object.defineProperty(read, 'keys', { get: () => world().keys });
    read.plan = () => plan(world());
    read.addressesOf = (id) => addressesOf(world(), id);
    const error = await scaler
      .scale(
        { replicas: 5, wait: WaitFor.none, timeoutSeconds: 10, drive: false, force: false },
        new AbortController().signal,
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'KEY_DUPLICATE' });
    expect((error as Error).message).toContain(
      '005 (KEY_DUPLICATE: is the key the node of pod validator-1 (002) still signs with)',
    );
    expect(writes).toEqual([]);
  });
});

describe('item 9: scale --wait active while the chain is halted with unstakes pending', () => {
  it('a validator whose unstake is on its way is not "active"; the scale does not answer done', async () => {
    // 007 wanted again, but its unstake (sent when it was scaled away) has not committed.
    const s: Scenario = {
      ...sevenActive,
      desired: seven.map((id) => wanted(id)),
      open: [action('007', { kind: 'unstake' })],
    };
    const { target } = fakeReplicas(7);
    const { scaler, clock } = scalerOver({ s, paused: false }, target);
    const done = scaler.scale(
      { replicas: 7, wait: WaitFor.active, timeoutSeconds: 5, drive: false, force: false },
      new AbortController().signal,
    );
    await clock.advance(6_000);
    const result = await done;
    expect(result.done).toBe(false);
    expect(result.missing.map((m) => m.id)).toEqual(['007']);
  });
});
