// Attack on the key-rotation rules (issue 30, docs/adr/0029): an operator swaps the keys of two
// staked validators (003 ⇄ 004) and swaps them back a few seconds later, before any rotation step
// was sent: the Secret is as it was, each pod's node still signs its own key, both rows are
// staked. Then 004's pod restarts (deleted, not back yet): no node is known to sign K4.
// 003 held K4 for three seconds and never staked it: K4 is 004's row, and 004 holds K4 again.
// A "rotation" of 003 off K4 would unstake 004's row (and 004 stake it again: a doubled pair),
// the same harm as soak seed 324200's action 286 (a duplicate), which the "borrowed" rule
// (planner/rotation.ts formerAddresses) covers only while the lender's own observation of the key
// predates the borrow — a swap back renews it.
import { describe, expect, it } from 'vitest';
import { type ValidatorId } from '../../src/manager/model.ts';
import { type PlanInput } from '../../src/manager/planner/plan.ts';
import { input, NOW, row, wanted } from '../support/plan-fixture.ts';
import { address, b64, byId, ids, secretHistory, seen } from '../support/key-history.ts';

const GENESIS_AT = NOW - 600_000;
const SWAPPED = NOW - 30_000;
const SWAPPED_BACK = NOW - 27_000;

function swappedBack(opts: { staked003By?: ValidatorId; podAway?: boolean } = {}): PlanInput {
  const own = Object.fromEntries(ids(6).map((id) => [id, b64(id)]));
  const store = secretHistory([own, { ...own, '003': b64('004'), '004': b64('003') }, own]);
  const base = input({
    // 004's pod deleted and not back yet: no node is known to sign K4. The others run since
    // genesis (on their own keys: nothing restarted them during the swap).
    desired: ids(6).map((id) =>
      id === '004' && opts.podAway !== false
        ? wanted(id, null)
        : wanted(id, { startedAt: GENESIS_AT + 2_000 }),
    ),
    keys: ids(6),
    chain: ids(6).map((id) => row(id)),
    signers: ids(6),
    minimumSet: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
  });
  return {
    ...base,
    keys: store,
    // The journal: each row staked by its own id before the swap (or none: genesis rows).
    lastStakes: new Map(
      opts.staked003By === undefined
        ? []
        : [
            [address('003'), { id: opts.staked003By, at: GENESIS_AT + 1_000, seq: 3 }],
            [address('004'), { id: '004', at: GENESIS_AT + 1_000, seq: 4 }],
          ],
    ),
    keysSeen: new Map([
      ...ids(6).map((id) => [id, seen(id, GENESIS_AT)] as const),
      ['003', seen('003', SWAPPED_BACK)],
      ['004', seen('004', SWAPPED_BACK)],
    ]),
    formerKeys: new Map([
      [
        '003',
        [
          { address: address('003'), observedAt: GENESIS_AT, replacedAt: SWAPPED },
          { address: address('004'), observedAt: SWAPPED, replacedAt: SWAPPED_BACK },
        ],
      ],
      [
        '004',
        [
          { address: address('004'), observedAt: GENESIS_AT, replacedAt: SWAPPED },
          { address: address('003'), observedAt: SWAPPED, replacedAt: SWAPPED_BACK },
        ],
      ],
    ]),
  };
}

describe('two ids’ keys swapped and swapped back, the lender’s pod restarting', () => {
  for (const journal of ['genesis rows', 'rows staked by their ids'] as const)
    it(`003 leaves 004's row alone while 004's pod is away (${journal})`, () => {
      const i = swappedBack(journal === 'genesis rows' ? {} : { staked003By: '003' });
      const three = byId(i).get('003');
      expect(three?.action, three?.reason).toBe('none');
      expect(three?.reason).not.toMatch(/key rotation/);
    });

  it('with both pods running on their own keys, nobody rotates (the signers tell)', () => {
    const d = byId(swappedBack({ podAway: false }));
    for (const id of ['003', '004']) expect(d.get(id)?.action, d.get(id)?.reason).toBe('none');
  });

  it('a key 003 staked while it held it stays its rotation (the row is 003’s)', () => {
    const i = swappedBack();
    // 003 staked K4 during the swap (after 004's rotation off it): 003's row, 003 unstakes it.
    const stakes = new Map([[address('004'), { id: '003', at: SWAPPED + 2_000, seq: 9 }]]);
    const three = byId({ ...i, lastStakes: stakes }).get('003');
    expect(three?.reason).toMatch(/key rotation/);
  });
});
