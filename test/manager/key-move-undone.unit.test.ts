// Soak seed 951301, step 35 (issue 30): a key moved from 003 to 002 (003 given a spare key), then
// undone while the pods ran on the moved keys. The plan right after the undo, as the manager had
// it: 002's pod signs 003's key (K3), 003's pod signs the spare (S); the Secret gives 002 its own
// key (K2) again, whose row is leaving after the move's unstake. The soak's manager staked K2 for
// 002 there, a row no node signs (its pod signs K3), then judged 002 `staked` and never restarted
// its pod; 003's pod waited for that pod to let go of K3: the step never converged.
import { describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import { type PlanInput } from '../../src/manager/planner/plan.ts';
import { input, NOW, row, wanted } from '../support/plan-fixture.ts';
import { address, b64, byId, ids, secretHistory, seen, without } from '../support/key-history.ts';

/** The genesis and the moved pods' starts, the move, the undo. */
const GENESIS_AT = NOW - 600_000;
const MOVED = NOW - 12_000;
const RESTARTED = NOW - 3_000; // the pods of 002 and 003 on the moved keys
const UNDONE = NOW - 1_000;

/** The Secret's three versions: own keys (013 a spare), the move, the undo (013 taken out). */
function keys(): KeyStore {
  const own = Object.fromEntries([...ids(7), '013'].map((id) => [id, b64(id)]));
  const moved = without({ ...own, '002': b64('003'), '003': b64('013') }, '013');
  const undone = { ...moved, '002': b64('002'), '003': b64('003') };
  return secretHistory([own, moved, undone]);
}

function afterUndo(nodesTell: boolean, stalled = false): PlanInput {
  const base = input({
    desired: ids(7).map((id) =>
      wanted(id, {
        startedAt: id === '002' || id === '003' ? RESTARTED : GENESIS_AT,
        readySince: id === '002' || id === '003' ? RESTARTED + 500 : GENESIS_AT,
      }),
    ),
    keys: ids(7),
    chain: stalled
      ? [
          ...['001', '004', '005', '006', '007'].map((id) => row(id)),
          row('002'), // K2: staked for 002 while its node signed K3
          row('003', ChainStatus.unstaking), // K3: unstaked by 002's rotation off it
          row('013', ChainStatus.unstaking), // S: unstaked by 003's rotation off it
        ]
      : [
          ...['001', '004', '005', '006', '007'].map((id) => row(id)),
          row('003'), // K3: staked again by 002 after the move
          row('013'), // S: staked by 003 after the move
          row('002', ChainStatus.unstaking), // K2: unstaked by the move's rotation
        ],
    // The stand-in drops leaving rows from its set: K3 and S no longer sign; nobody signs K2.
    signers: stalled
      ? ['001', '004', '005', '006', '007']
      : ['001', '004', '005', '006', '007', '003', '013'],
    minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
  });
  return {
    ...base,
    keys: keys(),
    keysSeen: new Map([
      ...ids(7).map((id) => [id, seen(id, GENESIS_AT)] as const),
      ['002', seen('002', UNDONE)],
      ['003', seen('003', UNDONE)],
    ]),
    formerKeys: new Map([
      [
        '002',
        [
          { address: address('002'), observedAt: GENESIS_AT, replacedAt: MOVED },
          { address: address('003'), observedAt: MOVED, replacedAt: UNDONE },
        ],
      ],
      [
        '003',
        [
          { address: address('003'), observedAt: GENESIS_AT, replacedAt: MOVED },
          { address: address('013'), observedAt: MOVED, replacedAt: UNDONE },
        ],
      ],
    ]),
    staleRestarts: new Map([
      ['002', { podName: 'validator-1', uid: 'uid-old-002', observedAt: MOVED }],
      ['003', { podName: 'validator-2', uid: 'uid-old-003', observedAt: MOVED }],
    ]),
    nodeKeys: nodesTell
      ? new Map([
          ['uid-002', { address: address('003'), startedAt: RESTARTED }],
          ['uid-003', { address: address('013'), startedAt: RESTARTED }],
        ])
      : new Map(),
  };
}

describe('a key move undone while the pods run on the moved keys (soak seed 951301)', () => {
  for (const nodesTell of [true, false])
    it(`no stake of an address no node signs (${nodesTell ? 'the nodes told' : 'inferred from the starts'})`, () => {
      const d = byId(afterUndo(nodesTell));
      const two = d.get('002');
      const three = d.get('003');
      // 002's node signs K3, a member 002 no longer has the key of: 002 rotates off it first.
      expect(two?.action === 'stake' && two.waitingFor === undefined, two?.reason).toBe(false);
      expect(three?.action === 'stake' && three.waitingFor === undefined, three?.reason).toBe(
        false,
      );
    });
});

describe('the state the soak stalled in (seed 951301): K2 staked with no signer, K3 and S leaving', () => {
  for (const nodesTell of [true, false])
    it(`002's pod, signing K3 (out of the set), is restarted onto K2; 003's waits for it (${nodesTell ? 'the nodes told' : 'inferred from the starts'})`, () => {
      const d = byId(afterUndo(nodesTell, true));
      const two = d.get('002');
      const three = d.get('003');
      // Was: 002 `staked` (its row staked, its node signing K3), nothing done, for good.
      expect(two?.waitingFor, two?.reason).toBe('stale-key');
      expect(two?.reason).toMatch(/; restarting it$/);
      expect(two?.action).toBe('none'); // its row is staked: nothing is sent
      // 003's pod would load K3, which 002's node still signs with: it waits for that restart.
      expect(three?.waitingFor, three?.reason).toBe('stale-key');
      expect(three?.reason).toMatch(/two nodes would sign with one key/);
    });
});
