// Attack on the key-rotation rule "a former key is the rotation's only until another id stakes its
// address" (planner/rotation.ts formerAddresses; docs/adr/0029): the journal's time of a stake
// (`LastStake.at`) is when its commit was *recorded*, which can be long after the stake was
// decided — the chain view confirms a commit by the transaction's hash, and an RPC outage delays
// that while the row already shows staked.
//
// 003, just scaled up, stakes its key K3 (sent at SENT). Its commit is not recorded yet when the
// Secret moves K3 to 004 (003 given the spare K9, MOVED); 004 rotates off K4, its pod restarts
// onto K3 (003's pod was restarted onto K9 too): 004's node signs K3, a staked row. Then 004 is
// rotated to K10 (ROTATED): K3 leaves the Secret; the manager holds it in memory for 004. Only
// then (RECORDED) does 003's stake of K3 get its commit recorded.
// K3's row is signed by 004's node alone and nobody's key now: it is 004's rotation (unstake K3
// with the held key, then restart 004's pod onto K10). Were it judged "staked by 003 since", nobody
// would take it out and 004's pod, its only signer, would never be restarted.
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/manager/journal/journal.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import { type PlanInput } from '../../src/manager/planner/plan.ts';
import { input, NOW, row, wanted } from '../support/plan-fixture.ts';
import { address, b64, byId, ids, secretHistory, seen, without } from '../support/key-history.ts';

const GENESIS_AT = NOW - 600_000;
const SCALED = NOW - 60_000;
const SENT = NOW - 40_000;
const MOVED = NOW - 30_000;
const RESTARTED = NOW - 20_000;
const ROTATED = NOW - 10_000;
const RECORDED = NOW - 5_000;

/** The journal: 003's stake of K3 prepared and sent at SENT, its commit recorded at RECORDED. */
function stakeRecordedLate(): ActionBook['lastStakes'] {
  const clock = new ManualClock(SENT);
  const book = new ActionBook(Journal.open(':memory:', clock));
  const stake = book.prepare({
    validatorId: '003',
    address: address('003'),
    kind: 'stake',
    mode: 'rpc',
    txHash: 'ab'.repeat(32),
    txHex: '0a',
    nonce: '1',
    fingerprint: 'f',
    reason: 'wanted',
    preparedHeight: 90,
  });
  book.markSent(stake.seq, { height: 90 });
  clock.stepWall(RECORDED - SENT);
  book.markCommitted(stake.seq, { height: 91, resultCode: 0 });
  return book.lastStakes;
}

function world(): PlanInput {
  const own = Object.fromEntries([...ids(6), '009', '010'].map((id) => [id, b64(id)]));
  const moved = without({ ...own, '003': b64('009'), '004': b64('003') }, '009');
  const rotated = without({ ...moved, '004': b64('010') }, '010');
  const store = secretHistory([own, moved, rotated]);
  const base = input({
    desired: ids(6).map((id) =>
      wanted(id, {
        startedAt: id === '003' || id === '004' ? RESTARTED : GENESIS_AT,
        readySince: id === '003' || id === '004' ? RESTARTED + 500 : GENESIS_AT,
      }),
    ),
    keys: ids(6),
    chain: [
      ...['001', '002', '005', '006'].map((id) => row(id)),
      row('003'), // K3: 003's stake, signed by 004's node
      row('004', ChainStatus.unstaking), // K4: 004's rotation off it
    ],
    signers: ['001', '002', '005', '006', '003'],
    minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
  });
  return {
    ...base,
    keys: store,
    lastStakes: stakeRecordedLate(),
    keysSeen: new Map([
      ...ids(6).map((id) => [id, seen(id, GENESIS_AT)] as const),
      ['003', seen('009', MOVED)],
      ['004', seen('010', ROTATED)],
    ]),
    formerKeys: new Map([
      ['003', [{ address: address('003'), observedAt: SCALED, replacedAt: MOVED }]],
      [
        '004',
        [
          { address: address('004'), observedAt: GENESIS_AT, replacedAt: MOVED },
          { address: address('003'), observedAt: MOVED, replacedAt: ROTATED },
        ],
      ],
    ]),
    nodeKeys: new Map([
      ['uid-003', { address: address('009'), startedAt: RESTARTED }],
      ['uid-004', { address: address('003'), startedAt: RESTARTED }],
    ]),
  };
}

describe('a stake whose commit was recorded after the key moved on (the journal’s time is the record’s)', () => {
  it('004 rotates off K3, the row only its node signs', () => {
    const d = byId(world());
    const four = d.get('004');
    expect(four?.reason).toMatch(/key rotation/);
    expect(four?.action, four?.reason).toBe('unstake');
  });
});
