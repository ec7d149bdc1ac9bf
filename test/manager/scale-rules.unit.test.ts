// The scaler's safety rules, pure: a validator counts as gone only when the chain shows it out
// (never on a key problem that hides its address), and a scale is refused below the minimum set,
// over a running drain, or past such a validator — each with its named code, unless forced.
import { describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import {
  leaveState,
  recordedDrain,
  refusal,
  type LeaveView,
  type ScaleCheck,
} from '../../src/manager/scale/scale-rules.ts';
import { action, keyOf, row } from '../support/plan-fixture.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const hex = (id: string) => keyOf(id).exportPrivateKeyHex();

function view(secrets: Record<string, string>[], chain: ReturnType<typeof row>[] = []): LeaveView {
  const keys = new KeyStore(pocketIds, pocketKeys);
  for (const data of secrets) keys.update(keySetOfSecret({ data }));
  return {
    keys,
    chain: new Map(chain.map((r) => [r.address, r])),
    open: new Map(),
    mempool: new Map(),
  };
}

describe('when a validator counts as gone', () => {
  it('gone once the chain shows it out and nothing of it is in flight', () => {
    const v = view([{ '004': b64(hex('004')) }], [row('004', ChainStatus.unstaking)]);
    expect(leaveState(v, '004')).toEqual({ left: true });
    expect(leaveState({ ...v, open: new Map([['004', action('004')]]) }, '004').left).toBe(false);
    expect(leaveState(view([{ '004': b64(hex('004')) }], [row('004')]), '004')).toMatchObject({
      left: false,
      keyProblem: undefined,
    });
  });

  it('never when its key is missing and its address was never seen (issue 16 item 3)', () => {
    // The keys Secret was deleted: 004 is staked on chain, but the manager cannot know it.
    const v = view([{}], [row('004')]);
    const state = leaveState(v, '004');
    expect(state).toMatchObject({ left: false, keyProblem: 'KEY_MISSING' });
    expect(state.left || state.reason).toMatch(/cannot be known/);
  });

  it('never while still staked with a malformed key (a trailing newline)', () => {
    const v = view([{ '004': b64(hex('004')) }, { '004': b64(`${hex('004')}\n`) }], [row('004')]);
    // Whether the key store takes the newline or not, a staked 004 is not gone.
    expect(leaveState(v, '004').left).toBe(false);
    const bad = view([{ '004': b64(`${hex('004')}zz`) }], [row('004')]);
    expect(leaveState(bad, '004')).toMatchObject({ left: false, keyProblem: 'KEY_INVALID' });
  });

  it('a key that went bad after being seen valid: gone only if the chain shows it out', () => {
    const secrets = [{ '004': b64(hex('004')) }, { '004': b64('nothex') }];
    expect(leaveState(view(secrets, [row('004')]), '004')).toMatchObject({
      left: false,
      keyProblem: 'KEY_INVALID',
    });
    expect(leaveState(view(secrets, [row('004', ChainStatus.unstaked)]), '004')).toEqual({
      left: true,
    });
  });

  it('a duplicate key: its (shared) address decides, and the problem is named', () => {
    const shared = b64(hex('001'));
    const v = view([{ '001': shared, '005': shared }], [row('001')]);
    expect(leaveState(v, '005')).toMatchObject({ left: false, keyProblem: 'KEY_DUPLICATE' });
  });
});

describe('a key removed from the Secret (S11)', () => {
  it('its own key held in memory: drained on it, no key problem', () => {
    const v = view(
      [{ '001': b64(hex('001')), '005': b64(hex('005')) }, { '001': b64(hex('001')) }],
      [row('001'), row('005')],
    );
    const state = leaveState(v, '005');
    expect(state).toMatchObject({ left: false, keyProblem: undefined });
    expect(state.left || state.reason).toMatch(/held in memory/);
  });

  it("a key it had that another id still holds is not held for it: KEY_MISSING, the row is the other's", () => {
    // devnet-cli: 007 given 002's key (refused), then none; 002 keeps its key and stays staked.
    // Judged "held", the scale past 007 was not refused and waited on 002's row for good.
    const key002 = b64(hex('002'));
    const v = view([{ '002': key002, '007': key002 }, { '002': key002 }], [row('002')]);
    expect(leaveState(v, '007')).toMatchObject({ left: false, keyProblem: 'KEY_MISSING' });
  });
});

describe('which scales are refused', () => {
  const base: ScaleCheck = {
    replicas: 4,
    force: false,
    previous: 6,
    drain: undefined,
    minimum: { size: 3, source: 'a quorum of the 4 genesis validator(s)' },
    leaving: [],
  };

  it('below the minimum set: BELOW_MINIMUM_SET, unless forced', () => {
    expect(refusal({ ...base, replicas: 0 })?.code).toBe('BELOW_MINIMUM_SET');
    expect(refusal({ ...base, replicas: 2 })?.message).toMatch(
      /below the minimum validator set of 3/,
    );
    expect(refusal({ ...base, replicas: 3 })).toBeUndefined();
    expect(refusal({ ...base, replicas: 0, force: true })).toBeUndefined();
    // Scaling up to a value still under it is no removal: allowed.
    expect(refusal({ ...base, previous: 1, replicas: 2 })).toBeUndefined();
    // Not known yet: a scale-down waits (NOT_READY), a scale-up does not.
    expect(refusal({ ...base, minimum: undefined })?.code).toBe('NOT_READY');
    expect(refusal({ ...base, minimum: undefined, replicas: 8 })).toBeUndefined();
  });

  it('over a running drain: SCALE_IN_PROGRESS, unless forced or to the same target', () => {
    const drain = { target: 2, from: 6, forced: false };
    expect(refusal({ ...base, drain })?.code).toBe('SCALE_IN_PROGRESS');
    expect(refusal({ ...base, drain, replicas: 8 })?.code).toBe('SCALE_IN_PROGRESS');
    expect(
      refusal({ ...base, drain, replicas: 2, minimum: { size: 2, source: 't' } }),
    ).toBeUndefined();
    expect(refusal({ ...base, drain, force: true })).toBeUndefined();
  });

  it('past a validator with a key problem: the key code, naming them, unless forced', () => {
    const leaving = [
      {
        id: '004',
        state: {
          left: false as const,
          keyProblem: undefined,
          reason: 'still in the validator set',
        },
      },
      {
        id: '005',
        state: {
          left: false as const,
          keyProblem: 'KEY_MISSING' as const,
          reason: 'KEY_MISSING: …',
        },
      },
    ];
    const refused = refusal({ ...base, leaving });
    expect(refused?.code).toBe('KEY_MISSING');
    expect(refused?.status).toBe(409);
    expect(refused?.details).toEqual({ validators: [{ id: '005', code: 'KEY_MISSING' }] });
    expect(refusal({ ...base, leaving, force: true })).toBeUndefined();
    expect(refusal({ ...base, leaving: leaving.slice(0, 1) })).toBeUndefined();
  });

  it('up to ids with no key in the Secret: KEY_MISSING naming the first of them, unless forced (scale 999 with 32 keys)', () => {
    const newKeyProblems = Array.from({ length: 967 }, (_, i) => ({
      id: String(33 + i).padStart(3, '0'),
      code: 'KEY_MISSING' as const,
    }));
    const refused = refusal({ ...base, previous: 4, replicas: 999, newKeyProblems });
    expect(refused?.code).toBe('KEY_MISSING');
    expect(refused?.message).toMatch(
      /^cannot scale to 999: no key .* for 033, 034, 035, 036, 037, … \(967\)/,
    );
    expect(
      refusal({ ...base, previous: 4, replicas: 999, newKeyProblems, force: true }),
    ).toBeUndefined();
    // Every id it adds has a key: no refusal; a scale-down is judged by its leaving validators.
    expect(refusal({ ...base, previous: 4, replicas: 8, newKeyProblems: [] })).toBeUndefined();
    expect(
      refusal({ ...base, previous: 6, replicas: 4, newKeyProblems: newKeyProblems.slice(0, 1) }),
    ).toBeUndefined();
  });

  it("up to an id whose key is another validator's (its pod would sign for it twice) or malformed: refused with its code, unless forced", () => {
    const newKeyProblems = [
      {
        id: '006',
        code: 'KEY_DUPLICATE' as const,
        message: 'the same key as "002"; none of them is acted on until each id has its own key',
      },
      { id: '007', code: 'KEY_MISSING' as const },
      { id: '008', code: 'KEY_INVALID' as const, message: 'not a hex private key' },
    ];
    const refused = refusal({ ...base, previous: 5, replicas: 8, newKeyProblems });
    expect(refused?.code).toBe('KEY_DUPLICATE');
    expect(refused?.status).toBe(409);
    expect(refused?.message).toBe(
      'cannot scale to 8: no usable key in the keys Secret for 006 (KEY_DUPLICATE: is the same key as "002"; none of them is acted on until each id has its own key), 007 (KEY_MISSING), 008 (KEY_INVALID: not a hex private key); their pods would run nodes that can never be validators; a shared key\'s pod would run a node with another validator\'s key, signing for it twice. Fix the keys first, or send force: true to scale anyway',
    );
    expect(refused?.details).toEqual({
      validators: [
        { id: '006', code: 'KEY_DUPLICATE' },
        { id: '007', code: 'KEY_MISSING' },
        { id: '008', code: 'KEY_INVALID' },
      ],
    });
    expect(
      refusal({ ...base, previous: 5, replicas: 8, newKeyProblems, force: true }),
    ).toBeUndefined();
    expect(
      refusal({ ...base, previous: 5, replicas: 9, newKeyProblems: newKeyProblems.slice(2) })?.code,
    ).toBe('KEY_INVALID');
  });

  it('reads the drain recorded on the StatefulSet', () => {
    const names = { target: 't', from: 'f', forced: 'x' };
    expect(recordedDrain({ t: '4', f: '5' }, names)).toEqual({ target: 4, from: 5, forced: false });
    expect(recordedDrain({ t: '4', x: 'true' }, names)).toEqual({
      target: 4,
      from: undefined,
      forced: true,
    });
    expect(recordedDrain({ t: 'four' }, names)).toBeUndefined();
    expect(recordedDrain(undefined, names)).toBeUndefined();
  });
});
