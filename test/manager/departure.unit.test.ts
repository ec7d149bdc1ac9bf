// May a validator pod go? (the preStop hook's question, GET /v1/departures/{pod}) — yes once its
// validator has left the set, or once the manager knows it never will; not yet while it is leaving
// or nothing can be decided. Pure: the rule on built inputs.
import { describe, expect, it } from 'vitest';
import { ChainStatus, type ValidatorId } from '../../src/manager/model.ts';
import { plan } from '../../src/manager/planner/plan.ts';
import { departureOf, type DepartureInput } from '../../src/manager/scale/departure.ts';
import {
  GENESIS,
  input,
  keyOf,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

function ask(s: Scenario, id: ValidatorId, extra: Partial<DepartureInput> = {}) {
  const planInput = input(s);
  const entry = planInput.desired.validators.get(id);
  const keys = planInput.keys;
  return departureOf({
    pod: `validator-${Number(id) - 1}`,
    entry: entry?.pod === undefined ? undefined : { ...entry, pod: entry.pod },
    decision: plan(planInput).find((d) => d.id === id),
    view: { keys, chain: planInput.chain, open: planInput.open, mempool: planInput.mempool },
    paused: planInput.paused,
    trust: planInput.trust,
    chainHealthy: true,
    height: planInput.height,
    othersLeaving: false,
    ...extra,
  });
}

const four = { signers: GENESIS, chain: GENESIS.map((id) => row(id)) };

describe('departures', () => {
  it('LEFT_SET once the chain shows the validator out: departed, final', () => {
    const d = ask(
      {
        ...four,
        chain: [...GENESIS.slice(0, 3).map((id) => row(id)), row('004', ChainStatus.unstaking)],
        desired: [unwanted('004')],
      },
      '004',
    );
    expect(d).toMatchObject({ departed: true, final: true, code: 'LEFT_SET', validatorId: '004' });
  });

  it('LEAVING while its unstake is still to come: not final', () => {
    const d = ask(
      { ...four, desired: [...GENESIS.slice(0, 3).map((id) => wanted(id)), unwanted('004')] },
      '004',
    );
    expect(d).toMatchObject({ departed: false, final: false, code: 'LEAVING' });
  });

  it('STILL_WANTED for a pod that restarts (its ordinal is still wanted): final, the validator stays', () => {
    const d = ask(
      { ...four, desired: GENESIS.map((id) => wanted(id, { terminating: true })) },
      '002',
    );
    expect(d).toMatchObject({ departed: false, final: true, code: 'STILL_WANTED' });
  });

  it('BELOW_MINIMUM_SET when the minimum set keeps it: final (pods may go; the chain waits for them)', () => {
    const d = ask(
      {
        ...four,
        desired: GENESIS.map((id) => unwanted(id)),
        minimumSet: { size: 3, source: 'test' },
      },
      '001',
    );
    expect(d).toMatchObject({ final: true, code: 'BELOW_MINIMUM_SET', departed: false });
    // While others' unstakes are still to commit, it must vote on: not final yet.
    const voting = ask(
      {
        ...four,
        desired: GENESIS.map((id) => unwanted(id)),
        minimumSet: { size: 3, source: 'test' },
      },
      '001',
      { othersLeaving: true },
    );
    expect(voting).toMatchObject({ final: false, code: 'BELOW_MINIMUM_SET' });
    expect(voting.reason).toMatch(
      /its vote is needed until the leaving validators' unstakes commit/,
    );
    // While the minimum is not known yet, nothing is final.
    const unknown = ask(
      { ...four, desired: GENESIS.map((id) => unwanted(id)), minimumSet: undefined },
      '001',
    );
    expect(unknown).toMatchObject({ final: false, code: 'BELOW_MINIMUM_SET' });
  });

  it('a key problem: the key code, final (the manager will never unstake it)', () => {
    const missing = ask(
      { ...four, keys: ['001', '002', '003'], desired: [unwanted('004')] },
      '004',
    );
    expect(missing).toMatchObject({ final: true, departed: false, code: 'KEY_MISSING' });
    const shared = Buffer.from(keyOf('001').exportPrivateKeyHex()).toString('base64');
    const duplicate = ask(
      {
        ...four,
        keys: ['002', '003', '004'],
        extraSecretData: { '001': shared, '005': shared },
        desired: [unwanted('005')],
      },
      '005',
    );
    expect(duplicate).toMatchObject({ final: true, code: 'KEY_DUPLICATE' });
  });

  it('HELD, UNMANAGED (an id two pods claim), NOT_A_VALIDATOR_POD: final', () => {
    expect(ask({ ...four, desired: [unwanted('004', { held: true })] }, '004').code).toBe('HELD');
    expect(
      ask(
        { ...four, desired: [{ ...unwanted('004'), conflict: 'id 004 is claimed by a and b' }] },
        '004',
      ).code,
    ).toBe('UNMANAGED');
    const none = ask({ ...four, desired: [] }, '004');
    expect(none).toMatchObject({ final: true, code: 'NOT_A_VALIDATOR_POD', validatorId: null });
  });

  it('not final while paused, while the chain is not trusted or does not answer', () => {
    const leaving = { ...four, desired: [unwanted('004')] };
    expect(ask({ ...leaving, paused: true }, '004')).toMatchObject({
      final: false,
      code: 'PAUSED',
    });
    expect(
      ask({ ...leaving, trust: { trusted: false, reason: 'went back' } }, '004'),
    ).toMatchObject({ final: false, code: 'CHAIN_UNTRUSTED' });
    expect(ask(leaving, '004', { chainHealthy: false })).toMatchObject({
      final: false,
      code: 'CHAIN_UNAVAILABLE',
    });
  });
});
