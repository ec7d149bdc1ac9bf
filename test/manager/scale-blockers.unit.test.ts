// When a scale's wait cannot end (issue 17, items 3 and 4): the rule that makes `scale` fail fast
// with the named reason instead of waiting out its timeout.
import { describe, expect, it } from 'vitest';
import { findBlocker, isStuck, MIN_STALL_MS } from '../../src/manager/scale/scale-blockers.ts';
import { DecisionCode } from '../../src/manager/model.ts';
import type { Unmet } from '../../src/manager/scale/scaler.ts';

const waiting: Unmet = {
  id: '005',
  phase: 'staked',
  code: undefined,
  reason: 'staked; waiting for its first signature',
};
const base = {
  paused: false,
  drive: false,
  missing: [waiting],
  now: 100_000,
  quietSince: 99_000,
  blockGapMs: 1_000 as number | undefined,
};

describe('a scale that cannot finish', () => {
  it.each([
    [
      'KEY_MISSING',
      {
        id: '006',
        phase: 'failed',
        code: DecisionCode.keyMissing,
        reason: 'KEY_MISSING: no key "006" in the keys Secret',
      },
    ],
    [
      'KEY_DUPLICATE',
      {
        id: '006',
        phase: 'failed',
        code: DecisionCode.keyDuplicate,
        reason: 'KEY_DUPLICATE: the key of "006" is also "002"',
      },
    ],
    [
      'KEY_INVALID',
      {
        id: '006',
        phase: 'failed',
        code: DecisionCode.keyInvalid,
        reason: 'KEY_INVALID: key "006" is malformed (x)',
      },
    ],
    [
      'a pod conflict',
      {
        id: '006',
        phase: 'failed',
        code: DecisionCode.podConflict,
        reason: 'conflict: pods a and b both map to 006',
      },
    ],
    [
      'a terminal failure',
      {
        id: '006',
        phase: 'failed',
        code: DecisionCode.actionFailed,
        reason: 'INSUFFICIENT_FUNDS: …; fix the inputs to retry',
      },
    ],
    [
      'a hold',
      {
        id: '006',
        phase: 'held',
        code: undefined,
        reason: 'pod validator-5 is held by annotation; nothing is done',
      },
    ],
  ] as const)('is blocked at once by %s, naming the validator and the reason', (_what, missing) => {
    const blocker = findBlocker({ ...base, missing: [waiting, missing] });
    expect(blocker?.code).toBe('VALIDATOR_STUCK');
    expect(blocker?.message).toBe(`${missing.id} is ${missing.phase}: ${missing.reason}`);
  });

  it('is not blocked by a service URL that will fill itself (no pod IP yet) or by progress', () => {
    expect(
      isStuck({
        id: '006',
        phase: 'failed',
        code: DecisionCode.serviceUrlUnfilled,
        reason: 'cannot fill the service-URL template for pod x',
      }),
    ).toBe(false);
    expect(findBlocker(base)).toBeUndefined();
    expect(findBlocker({ ...base, missing: [] })).toBeUndefined();
  });

  it('reads the decision code, not the reason: NO_STATE_SYNC blocks, its words alone do not', () => {
    const silent: Unmet = {
      id: '006',
      phase: 'pending',
      code: DecisionCode.noStateSync,
      reason: 'the chain cannot carry one more silent member',
    };
    expect(findBlocker({ ...base, missing: [waiting, silent] })?.code).toBe('NO_STATE_SYNC');
    const words: Unmet = { ...silent, code: undefined, reason: 'NO_STATE_SYNC: cannot vote' };
    expect(findBlocker({ ...base, missing: [waiting, words] })).toBeUndefined();
    // A failed phase is stuck unless its code says it fills itself, whatever the words.
    expect(isStuck({ ...silent, phase: 'failed', code: undefined, reason: 'cannot fill' })).toBe(
      true,
    );
  });

  it('is blocked when the manager is paused meanwhile', () => {
    expect(findBlocker({ ...base, paused: true })).toMatchObject({ code: 'PAUSED' });
  });

  it('is blocked when no block came for 10 s while not driven, and the reason names --drive', () => {
    const quiet = { ...base, quietSince: base.now - MIN_STALL_MS };
    const blocker = findBlocker(quiet);
    expect(blocker?.code).toBe('NO_BLOCKS');
    expect(blocker?.message).toMatch(/no block in the last 10 s.*pass --drive/);
    expect(findBlocker({ ...quiet, quietSince: quiet.quietSince + 1 })).toBeUndefined();
    expect(findBlocker({ ...quiet, drive: true })).toBeUndefined();
  });

  it('waits longer on a chain that is slow by design: five of its own block gaps', () => {
    const slow = { ...base, blockGapMs: 30_000 };
    expect(findBlocker({ ...slow, quietSince: base.now - 100_000 })).toBeUndefined();
    expect(findBlocker({ ...slow, quietSince: base.now - 150_000 })?.code).toBe('NO_BLOCKS');
  });
});
