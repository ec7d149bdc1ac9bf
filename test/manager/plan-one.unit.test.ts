// planOne (one validator's decision, what a reconcile asks for) is plan() restricted to that id,
// for any input: checked over random clusters, chains, journals and mempools (fast-check).
import fc from 'fast-check';
import { capabilitiesOf } from '../../src/manager/chain/pocket/capabilities.ts';
import { describe, expect, it } from 'vitest';
import { ActionKind, ChainStatus, type DesiredValidator } from '../../src/manager/model.ts';
import { plan, planOne, type StaleRestart } from '../../src/manager/planner/plan.ts';
import { action, input, KEYS, NOW, row, unwanted, wanted } from '../support/plan-fixture.ts';

const IDS = [...KEYS.keys()].slice(0, 12);

const podFields = fc.oneof(
  fc.constant({}),
  fc.constant(null),
  fc.constant({ ready: false, readySince: undefined }),
  fc.constant({ held: true }),
  fc.constant({ draining: true }),
  fc.constant({ readySince: NOW - 500 }),
  fc.constant({ serviceUrl: undefined }),
  // Started before its key was seen (stale), or in the key's own second with another uid.
  fc.constant({ startedAt: NOW - 10_000 }),
  fc.constant({ startedAt: NOW - 5_000, uid: 'uid-new' }),
);

const validator = fc.record({
  desired: fc.constantFrom('none', 'wanted', 'unwanted'),
  pod: podFields,
  key: fc.constantFrom('ok', 'missing', 'duplicate'),
  chain: fc.constantFrom('absent', ChainStatus.staked, ChainStatus.unstaking, ChainStatus.paused),
  signed: fc.boolean(),
  open: fc.constantFrom('none', 'stake', 'unstake'),
  mempool: fc.constantFrom('none', ActionKind.stake, ActionKind.unstake),
  node: fc.constantFrom('synced', 'lagging', 'unknown'),
  stakeHeight: fc.option(fc.integer({ min: 90, max: 110 }), { nil: undefined }),
  terminal: fc.boolean(),
  // Its key seen at NOW − 5 s; the manager deleted its pod (uid-old, or the uid the fixture gives).
  seen: fc.boolean(),
  restarted: fc.constantFrom('none', 'uid-old', 'same'),
});

const scenario = fc.record({
  validators: fc.array(validator, { minLength: IDS.length, maxLength: IDS.length }),
  synced: fc.boolean(),
  paused: fc.boolean(),
  unresolved: fc.boolean(),
  pacing: fc.constantFrom('bft', 'off'),
  profile: fc.constantFrom('intended', 'v1'),
  syncCheck: fc.boolean(),
  trusted: fc.boolean(),
  minimum: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
});

describe('planOne', () => {
  it('decides exactly what plan() decides for that id', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const desired: DesiredValidator[] = [];
        const chain = [];
        const signers: string[] = [];
        const open = [];
        const latest = [];
        const mempool = [];
        const keys: string[] = [];
        const stakeHeights: Record<string, number> = {};
        const nodeHeights: Record<string, number> = {};
        const extraSecretData: Record<string, string> = {};
        const keysSeen: Record<string, number> = {};
        const staleRestarts: Record<string, StaleRestart> = {};
        for (const [i, v] of s.validators.entries()) {
          const id = IDS[i] as string;
          if (v.desired === 'wanted') desired.push(wanted(id, v.pod));
          if (v.desired === 'unwanted') desired.push(unwanted(id, v.pod));
          if (v.key === 'ok') keys.push(id);
          // A copy of 001's key under this id: both become KEY_DUPLICATE.
          if (v.key === 'duplicate')
            extraSecretData[id] = Buffer.from(
              KEYS.get('001')?.exportPrivateKeyHex() ?? '',
            ).toString('base64');
          if (v.chain !== 'absent') chain.push(row(id, v.chain));
          if (v.signed) signers.push(id);
          if (v.open !== 'none') open.push(action(id, { kind: v.open, seq: i + 1 }));
          else if (v.terminal)
            latest.push(
              action(id, { kind: 'stake', state: 'failed', terminal: true, fingerprint: 'x' }),
            );
          if (v.mempool !== 'none') mempool.push({ id, kind: v.mempool });
          if (v.stakeHeight !== undefined) stakeHeights[id] = v.stakeHeight;
          if (v.node !== 'unknown') nodeHeights[id] = v.node === 'synced' ? 100 : 90;
          if (v.seen) keysSeen[id] = NOW - 5_000;
          if (v.restarted !== 'none')
            staleRestarts[id] = {
              podName: `validator-${Number(id) - 1}`,
              uid: v.restarted === 'same' ? `uid-${id}` : 'uid-old',
              observedAt: NOW - 5_000,
            };
        }
        const planInput = input({
          desired,
          chain,
          keys,
          signers,
          open,
          latest: [...open, ...latest],
          mempool,
          stakeHeights,
          nodeHeights,
          synced: s.synced,
          paused: s.paused,
          unresolvedWanted: s.unresolved ? ['validator-99'] : [],
          extraSecretData,
          keysSeen,
          staleRestarts,
          trust: { trusted: s.trusted, reason: s.trusted ? undefined : 'went back' },
          minimumSet: s.minimum === undefined ? undefined : { size: s.minimum, source: 'test' },
          settings: {
            pacing: s.pacing,
            syncCheck: s.syncCheck,
            capabilities: capabilitiesOf(s.profile),
          },
        });
        const all = plan(planInput);
        for (const id of [...IDS, '999']) {
          expect(planOne(planInput, id)).toEqual(all.find((d) => d.id === id));
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('keeps the pacing order: of several Ready joiners, only the lowest ids within the budget go', () => {
    const genesis = ['001', '002', '003', '004', '005'];
    const planInput = input({
      desired: [...genesis, '006', '007', '008'].map((id) => wanted(id)),
      chain: genesis.map((id) => row(id)),
      signers: genesis,
    });
    const go = ['006', '007', '008'].filter(
      (id) => planOne(planInput, id)?.waitingFor === undefined,
    );
    expect(go).toEqual(['006', '007']);
  });
});
