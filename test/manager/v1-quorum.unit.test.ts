// V1's quorum, exactly (issue 29): the leader's own vote never counts (consensus/
// hotstuff_leader.go:96-102 sends it through RainTree, which drops a send to its own address,
// p2p/raintree/router.go:172-179), so a height commits only when the *other* live voters are more
// than 2/3 of every row V1 keeps (consensus/helpers.go:119-134; unstaked rows included). With four
// genesis validators all four must vote and a fifth row halts the chain for good; with seven, one
// late joiner fits and a second does not. Pacing, the minimum set and the scaler use that rule;
// the planner and the scaler are run on built inputs and fakes of the scaler's ports.
import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/manager/chain/pocket/capabilities.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import { resolveMinimumSet } from '../../src/manager/planner/minimum-set.ts';
import { pacingBudget } from '../../src/manager/planner/pacing.ts';
import { plan, Wait } from '../../src/manager/planner/plan.ts';
import { WaitFor } from '../../src/manager/scale/scaler.ts';
import { input, row, unwanted, wanted, type Scenario } from '../support/plan-fixture.ts';
import { fakeReplicas, scalerOver } from '../support/scaler-fakes.ts';

const V1 = capabilitiesOf('v1');
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

function decisions(s: Scenario) {
  return new Map(
    plan(input({ ...s, settings: { capabilities: V1, ...s.settings } })).map((d) => [d.key, d]),
  );
}

/** `n` genesis validators, all voting, and the ids up to `wanted` wanted (pods Ready). */
function genesis(n: number, wantedUpTo: number, extra: Partial<Scenario> = {}): Scenario {
  return {
    keys: ids(Math.max(n, wantedUpTo) + 2),
    signers: ids(n),
    chain: ids(n).map((id) => row(id)),
    desired: ids(Math.max(n, wantedUpTo)).map((id, i) =>
      i < wantedUpTo ? wanted(id) : unwanted(id),
    ),
    settings: { capabilities: V1 },
    ...extra,
  };
}

describe("pacing with V1's quorum (the leader's own vote does not count)", () => {
  it('four genesis voters carry no late joiner: 005 is refused, with the arithmetic', () => {
    const s = genesis(4, 5);
    expect(pacingBudget(input(s))).toMatchObject({
      voting: 4,
      votes: 3,
      members: 4,
      budget: 0,
      ceiling: 0,
    });
    const d = decisions(s).get('005');
    expect(d).toMatchObject({
      action: 'stake',
      waitingFor: Wait.noStateSync,
      code: 'NO_STATE_SYNC',
    });
    expect(d?.reason).toContain("5 rows need 4 votes besides the leader's; 4 voters give 3");
    expect(d?.reason).toMatch(/halt the chain for good/);
    expect(d?.reason).toMatch(/a larger genesis set/);
  });

  it('seven genesis voters carry one late joiner, not two: 008 goes, 009 is refused', () => {
    const d = decisions(genesis(7, 9));
    expect(d.get('008')).toMatchObject({ action: 'stake', waitingFor: undefined });
    expect(d.get('009')).toMatchObject({ waitingFor: Wait.noStateSync });
    expect(d.get('009')?.reason).toContain(
      "9 rows need 7 votes besides the leader's; 7 voters give 6",
    );
  });

  it('an unstaked row still counts: after 008 joined and left, nothing more fits seven voters', () => {
    const s = genesis(7, 9, {
      chain: [...ids(7).map((id) => row(id)), row('008', ChainStatus.unstaked)],
    });
    expect(decisions(s).get('009')).toMatchObject({ waitingFor: Wait.noStateSync });
  });

  it('the intended chain counts the leader: four voters take one newcomer at a time', () => {
    const s = genesis(4, 5, { settings: { capabilities: capabilitiesOf('intended') } });
    expect(pacingBudget(input(s))).toMatchObject({ voting: 4, votes: 4, budget: 1 });
    expect(plan(input(s)).find((x) => x.id === '005')).toMatchObject({
      action: 'stake',
      waitingFor: undefined,
    });
  });
});

describe("the minimum set with V1's quorum", () => {
  it('auto is the voters a quorum of the genesis set needs: 4 of 4, 6 of 7 (3 and 5 on the intended chain)', () => {
    const of = (count: number, caps = V1) =>
      resolveMinimumSet({
        configured: 'auto',
        genesisCount: count,
        forced: undefined,
        capabilities: caps,
      })?.size;
    expect([of(4), of(7)]).toEqual([4, 6]);
    expect([of(4, capabilitiesOf('intended')), of(7, capabilitiesOf('intended'))]).toEqual([3, 5]);
  });

  it('kubectl scale 3 on four genesis validators: 004 is kept staked, the reason gives the arithmetic', () => {
    // Even with a configured minimum of 3, the rows that stay must commit: V1 keeps 004's row in its
    // quorum after its unstake, and its pod goes — three voters of four rows halt the chain.
    const d = decisions(genesis(4, 3, { minimumSet: { size: 3, source: 'CM_MIN_VALIDATORS=3' } }));
    expect(d.get('004')).toMatchObject({
      action: 'unstake',
      waitingFor: Wait.minimumSet,
      phase: 'held',
    });
    expect(d.get('004')?.reason).toContain(
      "4 rows need 3 votes besides the leader's; 3 voters give 2",
    );
  });

  it('seven genesis validators lose one: 007 is unstaked (six give five votes of seven rows)', () => {
    const d = decisions(genesis(7, 6, { minimumSet: { size: 5, source: 'test' } }));
    expect(d.get('007')).toMatchObject({ action: 'unstake', waitingFor: undefined });
  });
});

describe("the scaler refuses at once what V1's quorum cannot survive", () => {
  async function scale(
    s: Scenario,
    from: number,
    to: number,
    extra: Partial<{ wait: WaitFor; drive: boolean; force: boolean }> = {},
  ) {
    const { target, writes, podMarks } = fakeReplicas(from);
    const { scaler } = scalerOver({ s, paused: false }, target);
    const outcome = await scaler
      .scale(
        {
          replicas: to,
          wait: WaitFor.none,
          timeoutSeconds: 60,
          drive: false,
          force: false,
          ...extra,
        },
        new AbortController().signal,
      )
      .then(
        (result) => ({ result, error: undefined }),
        (error: unknown) => ({ result: undefined, error }),
      );
    return { ...outcome, writes, podMarks };
  }

  it.each([
    { wait: WaitFor.none, drive: false },
    { wait: WaitFor.none, drive: true },
    { wait: WaitFor.staked, drive: true },
    { wait: WaitFor.active, drive: false },
  ])(
    'scale 5 on four genesis validators ($wait, drive $drive): CHAIN_WOULD_HALT, nothing written',
    async (how) => {
      const { error, writes, podMarks } = await scale(genesis(4, 4), 4, 5, how);
      expect(error).toMatchObject({ code: 'CHAIN_WOULD_HALT', status: 409 });
      expect((error as Error).message).toContain(
        "5 rows need 4 votes besides the leader's; 4 voters give 3",
      );
      expect((error as Error).message).toMatch(/Nothing was changed/);
      expect(writes).toEqual([]);
      expect(podMarks).toEqual([]);
    },
  );

  it('force does not lift a scale-up that would halt the chain for good', async () => {
    const { error, writes } = await scale(genesis(4, 4), 4, 5, { force: true });
    expect(error).toMatchObject({ code: 'CHAIN_WOULD_HALT' });
    expect(writes).toEqual([]);
  });

  it('scale 3 on four genesis validators: refused, nothing marked (force lifts it)', async () => {
    const s = genesis(4, 4, { minimumSet: { size: 3, source: 'test' } });
    const { error, writes, podMarks } = await scale(s, 4, 3);
    expect(error).toMatchObject({ code: 'CHAIN_WOULD_HALT' });
    expect((error as Error).message).toContain(
      "4 rows need 3 votes besides the leader's; 3 voters give 2",
    );
    expect(writes).toEqual([]);
    expect(podMarks).toEqual([]);
  });

  it('seven genesis validators: scale 8 goes ahead, scale 9 is refused', async () => {
    const eight = await scale(genesis(7, 7), 7, 8);
    expect(eight.error).toBeUndefined();
    expect(eight.writes).toEqual([{ replicas: 8, resourceVersion: expect.any(String) }]);
    const nine = await scale(genesis(7, 7), 7, 9);
    expect(nine.error).toMatchObject({ code: 'CHAIN_WOULD_HALT' });
    expect((nine.error as Error).message).toContain(
      "9 rows need 7 votes besides the leader's; 7 voters give 6",
    );
    expect(nine.writes).toEqual([]);
  });

  it('the intended chain takes the same scales (paced; unstaked rows leave the quorum)', async () => {
    const intended = { capabilities: capabilitiesOf('intended') };
    expect((await scale(genesis(4, 4, { settings: intended }), 4, 5)).error).toBeUndefined();
    const down = await scale(
      genesis(4, 4, { settings: intended, minimumSet: { size: 3, source: 't' } }),
      4,
      3,
    );
    expect(down.error).toBeUndefined();
  });
});
