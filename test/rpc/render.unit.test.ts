// The scale progress display: on a terminal a table redrawn in place (pod ready → staked →
// active per validator); elsewhere one plain line per phase change, no escape codes — in the
// manager's phases, the words `status`, `watch` and the devnet's board use too.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isSettled } from '../../src/manager/cli/render.ts';
import { ScaleProgress } from '../../src/manager/cli/scale-progress.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';

/** What was drawn after going up `rows` rows (the redraw), without its line erases. */
function redrawn(text: string, rows: number): string {
  const parts = text.split(`\x1b[${rows}A\r`);
  expect(parts.length, `a redraw going up ${rows} rows`).toBeGreaterThan(1);
  return parts.at(-1)!.replaceAll('\x1b[2K', '').replaceAll('\x1b[J', '');
}

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

/** A terminal of `columns` × `rows` (its size can change: emit `resize`). */
function terminal(columns: number, rows = 40) {
  return Object.assign(sink(true), { columns, rows });
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

  it('redraws a table in place on a terminal, with a mark per reached step when the width has room', () => {
    const out = terminal(160);
    const progress = new ScaleProgress(out);
    progress.show(steps[2]!);
    expect(out.text().split('\n').slice(0, 2)).toEqual([
      'ID   POD          PHASE   STEPS                                  REASON',
      '005  validator-4  staked  [x] pod ready  [x] staked  [ ] active  staked; waiting',
    ]);
    progress.show(steps[3]!);
    // Header and row erased (two rows), then drawn again.
    expect(redrawn(out.text(), 2)).toMatch(/\n005 .*\[x\] active {2}signing\n$/);
  });

  const long = (id: string, reason: string): ValidatorStatus =>
    validator(id, { ready: true, chain: 'staked', phase: 'staked', reason });
  const REASON =
    'pacing: 1 validator(s) joining or silent in a set of 6 with 5 voting; no more may join until they vote';

  it('at 80 columns leaves the steps out and cuts a long reason at a word, each validator on one line, saying how to see it whole', () => {
    const out = terminal(80);
    new ScaleProgress(out).show([long('005', REASON), long('006', 'staked; waiting')]);
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toEqual([
      'ID   POD          PHASE   REASON',
      '005  validator-4  staked  pacing: 1 validator(s) joining or silent in a set of…',
      '006  validator-5  staked  staked; waiting',
      '(reasons cut to fit: scale --wide shows them whole)',
    ]);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
  });

  it('--wide wraps the reason onto lines of its own under the reason column', () => {
    const out = terminal(80);
    new ScaleProgress(out, { wide: true }).show([long('005', REASON)]);
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toEqual([
      'ID   POD          PHASE   REASON',
      '005  validator-4  staked  pacing: 1 validator(s) joining or silent in a set of 6',
      '                          with 5 voting; no more may join until they vote',
    ]);
  });

  it('on a resize, erases as many rows as the drawing takes at the new width (rewrapped), then draws for it', () => {
    const out = terminal(160);
    const progress = new ScaleProgress(out);
    progress.show([long('005', REASON)]);
    const drawn = out.text().trimEnd().split('\n');
    // Header, row, note: the row is one row at 160 and two at 80, once the terminal rewraps it.
    expect(drawn).toHaveLength(3);
    expect([...drawn[1]!].length).toBeGreaterThan(80);
    out.columns = 80;
    out.emit('resize');
    const after = redrawn(out.text(), 4);
    expect(after.trimEnd().split('\n')).toEqual([
      'ID   POD          PHASE   REASON',
      '005  validator-4  staked  pacing: 1 validator(s) joining or silent in a set of…',
      '(reasons cut to fit: scale --wide shows them whole)',
    ]);
    progress.finish('done');
    expect(out.listenerCount('resize')).toBe(0);
  });

  it('on a short terminal shows who is not there yet, counting the others', () => {
    const out = terminal(80, 8);
    const many = Array.from({ length: 12 }, (_, i) =>
      validator(String(i + 1).padStart(3, '0'), {
        ready: true,
        chain: 'staked',
        phase: i < 10 ? 'active' : 'staking',
        reason: i < 10 ? 'signing' : 'stake sent',
      }),
    );
    new ScaleProgress(out).show(many);
    const lines = out.text().trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(8 - 1);
    expect(lines.slice(1, 3).map((l) => l.slice(0, 3))).toEqual(['011', '012']);
    expect(lines.at(-1)).toBe('… 10 more, where the scale wants them or not shown');
  });
});
