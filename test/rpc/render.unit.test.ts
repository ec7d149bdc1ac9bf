// The scale progress display: on a terminal a table redrawn in place (pod ready → staked →
// active per validator); elsewhere one plain line per phase change, no escape codes — in the
// manager's phases, the words `status`, `watch` and the devnet's board use too.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isSettled, ScaleProgress } from '../../src/manager/cli/render.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';

function sink(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return Object.assign(stream, { isTTY, text: () => text });
}

function validator(
  id: string,
  parts: Partial<Pick<ValidatorStatus, 'ready' | 'wanted' | 'phase' | 'reason'>> & {
    chain?: ValidatorStatus['chain']['status'];
  },
): ValidatorStatus {
  return {
    key: id,
    id,
    address: `addr-${id}`,
    pod: `validator-${Number(id) - 1}`,
    ready: parts.ready ?? false,
    wanted: parts.wanted ?? true,
    chain: {
      status: parts.chain ?? 'absent',
      stakedAmount: null,
      unstakingHeight: null,
      lastSignedHeight: null,
    },
    phase: parts.phase ?? 'pending',
    reason: parts.reason ?? 'because',
    waitingFor: null,
    pendingAction: null,
    lastAction: null,
  };
}

const steps = [
  [validator('005', { reason: 'waiting for pod validator-4 to be Ready' })],
  [validator('005', { ready: true, reason: 'pod validator-4 Ready for 200 ms of 1000' })],
  [validator('005', { ready: true, chain: 'staked', phase: 'staked', reason: 'staked; waiting' })],
  [validator('005', { ready: true, chain: 'staked', phase: 'active', reason: 'signing' })],
];

describe('scale progress', () => {
  it('a joiner is settled once active (or staked, for --wait staked); a leaver once unstaked', () => {
    expect(
      steps.map(([v]) => [v!.phase, isSettled(v!, 'active'), isSettled(v!, 'staked')]),
    ).toEqual([
      ['pending', false, false],
      ['pending', false, false],
      ['staked', false, true],
      ['active', true, true],
    ]);
    const leaving = (phase: ValidatorStatus['phase'], chain: ValidatorStatus['chain']['status']) =>
      validator('004', { wanted: false, chain, phase });
    expect(isSettled(leaving('active', 'staked'), 'active')).toBe(false); // draining
    expect(isSettled(leaving('unstaking', 'staked'), 'active')).toBe(false);
    expect(isSettled(leaving('held', 'staked'), 'active')).toBe(false); // the minimum set
    expect(isSettled(leaving('unstaked', 'unstaking'), 'active')).toBe(true);
  });

  it('prints one plain line per phase change when not on a terminal', () => {
    const out = sink(false);
    const progress = new ScaleProgress(out);
    progress.note('scaling to 5 (wait: active)…');
    for (const step of steps) {
      progress.show(step);
      progress.show(step); // an unchanged snapshot prints nothing
    }
    expect(out.text()).toBe(
      [
        'scaling to 5 (wait: active)…',
        '005: pending (waiting for pod validator-4 to be Ready)',
        '005: pending → staked (staked; waiting)',
        '005: staked → active (signing)',
        '',
      ].join('\n'),
    );
    expect(out.text()).not.toContain('\x1b[');
  });

  it('skips settled validators in the first snapshot only: a joiner first seen active is reported', () => {
    const out = sink(false);
    const progress = new ScaleProgress(out);
    progress.show([validator('001', { ready: true, chain: 'staked', phase: 'active' })]);
    progress.show([
      validator('001', { ready: true, chain: 'staked', phase: 'active' }),
      validator('002', { ready: true, chain: 'staked', phase: 'active', reason: 'signing' }),
    ]);
    expect(out.text()).toBe('002: active (signing)\n');
  });

  it('redraws a table in place on a terminal, with a mark per reached stage', () => {
    const out = sink(true);
    const progress = new ScaleProgress(out);
    progress.show(steps[2]!);
    expect(out.text()).toMatch(
      /^005 {2}validator-4 +\[x\] pod ready {2}\[x\] staked {2}\[ \] active/,
    );
    progress.show(steps[3]!);
    expect(out.text()).toContain('\x1b[1A\x1b[J');
    expect(out.text().split('\x1b[1A\x1b[J')[1]).toMatch(
      /^005 {2}validator-4 +\[x\] pod ready {2}\[x\] staked {2}\[x\] active/,
    );
  });
});
