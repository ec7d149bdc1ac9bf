// The live tables (`scale --wait` and the devnet's board) at the widths terminals come in: no line
// wider than the screen, every validator's ID and PHASE on its row whatever columns are left out,
// and a reason cut only between words (the words shown are the reason's own, whole).
import { describe, expect, it } from 'vitest';
import { boardLines } from '../../src/devnet/status-board.ts';
import { ScaleProgress } from '../../src/manager/cli/scale-progress.ts';
import { cutAtWord, wrapWords } from '../../src/manager/cli/validator-table.ts';
import type { Screen } from '../../src/manager/cli/screen.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';

/** Reasons the manager gives (src/manager/status.ts), the longest ones it has. */
const REASONS = [
  'pacing: 1 validator(s) joining or silent in a set of 6 with 5 voting; no more may join until they vote',
  'staked at height 41; waiting for the set of height 42 to include it (the chain takes a block to see it)',
  'waiting for pod validator-5 to be Ready (container localnet-node: ContainerCreating since 12 s)',
  'signing',
];

function validator(n: number, reason: string): ValidatorStatus {
  const id = String(n).padStart(3, '0');
  return {
    key: `key-${id}`,
    id,
    address: `addr-${id}`,
    pod: `validator-${n - 1}`,
    ready: n < 5,
    wanted: true,
    chain: {
      status: n < 5 ? 'staked' : 'absent',
      stakedAmount: null,
      unstakingHeight: null,
      lastSignedHeight: null,
    },
    phase: n < 5 ? 'active' : 'pending',
    reason,
    waitingFor: null,
    pendingAction: null,
    lastAction: null,
  };
}

const VALIDATORS = [1, 2, 3, 4, 5, 6].map((n) => validator(n, REASONS[n % REASONS.length]!));
const screen = (width: number): Screen => ({
  width,
  height: 40,
  tty: true,
  color: false,
  write: () => true,
});
const progressLines = (width: number, wide = false): string[] =>
  new ScaleProgress({ isTTY: true, write: () => true }, { wide, env: {} }).lines(
    VALIDATORS,
    screen(width),
  );
const boardOf = (width: number, wide = false): string[] =>
  boardLines(VALIDATORS, screen(width), { wide, time: '12:00:00' });

/** The shown part of a reason is its own words, whole: the reason itself, or a cut at a space. */
function cutAtAWord(shown: string, reason: string): boolean {
  if (shown === reason) return true;
  if (!shown.endsWith('…')) return false;
  const head = shown.slice(0, -1);
  return reason.startsWith(head) && (reason[head.length] === ' ' || /[ ,;:]$/.test(head));
}

describe.each([
  ['scale --wait', progressLines],
  ["the devnet's board", boardOf],
] as const)('%s', (_, draw) => {
  it.each([80, 120, 200])(
    'at %i columns: no line wider, ID and PHASE on every row, reasons cut at a word',
    (width) => {
      const lines = draw(width);
      for (const line of lines)
        expect([...line].length, `${line}\n(of ${lines.join('\n')})`).toBeLessThanOrEqual(width);
      const header = lines.find((l) => l.startsWith('ID '));
      expect(header, lines.join('\n')).toMatch(/ PHASE /);
      const reasonAt = header!.indexOf('REASON');
      const phaseAt = header!.indexOf('PHASE');
      for (const v of VALIDATORS) {
        const rows = lines.filter((l) => l.startsWith(`${v.id} `));
        expect(rows, `${v.id}'s rows in\n${lines.join('\n')}`).toHaveLength(1);
        const row = rows[0]!;
        expect(row.slice(phaseAt).split(' ')[0]).toBe(v.phase);
        expect(cutAtAWord(row.slice(reasonAt), v.reason), `${row}\n${v.reason}`).toBe(true);
      }
      // At 200 columns nothing needs cutting.
      if (width === 200)
        for (const v of VALIDATORS) expect(lines.some((l) => l.endsWith(v.reason))).toBe(true);
    },
  );

  it.each([80, 120])(
    '--wide at %i columns: every reason whole, wrapped under its column',
    (width) => {
      const lines = draw(width, true);
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
      const text = lines.map((l) => l.trim()).join(' ');
      for (const v of VALIDATORS) expect(text).toContain(v.reason.split(' ').slice(-3).join(' '));
      expect(lines.join('\n')).not.toContain('…');
    },
  );
});

describe('cutting and wrapping', () => {
  it('cuts at the last space that fits, marking the cut', () => {
    expect(cutAtWord('staked at height 41; waiting', 20)).toBe('staked at height…');
    expect(cutAtWord('short', 20)).toBe('short');
  });
  it('wraps between words, never past the width', () => {
    expect(wrapWords('one two three four five', 9)).toEqual(['one two', 'three', 'four five']);
  });
});
