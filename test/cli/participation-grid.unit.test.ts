// The terminal grid of `cluster-manager participation` (participation-grid.ts over grid.ts and
// screen.ts): one row per validator, the newest heights at the right, as many as the width leaves
// room for, no line wider than the screen (80 columns and narrower, with colour or without), a
// legend, plain text off a terminal; and cells.js's meaning of a cell, which the page shares.
import { describe, expect, it } from 'vitest';
import { header } from '../../src/manager/cli/grid.ts';
import { heightLine, participationLines } from '../../src/manager/cli/participation-grid.ts';
import {
  fit,
  LiveRegion,
  screenOf,
  visibleLength,
  wrapItems,
} from '../../src/manager/cli/screen.ts';
import { LEGEND, statesAt, type Height } from '../../src/manager/ui/cells.js';

const ids = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

function heights(from: number, to: number, validators: string[]): Height[] {
  return Array.from({ length: to - from + 1 }, (_, i) => {
    const height = from + i;
    const missing = validators[height % validators.length]!;
    return {
      height,
      hash: `h${height}`,
      time: null,
      proposer: validators[(height + 1) % validators.length]!,
      signers: validators.filter((v) => v !== missing),
      absent: [missing],
      transactions:
        height === to ? [{ kind: 'stake', validator: '099', hash: 'x', resultCode: 0 }] : [],
    };
  });
}

const plain = { width: 80, color: false, height: Number.POSITIVE_INFINITY };

describe('the participation grid in a terminal', () => {
  const validators = [...ids(6), '099', 'f'.repeat(40)];
  const input = { validators, height: 500, heights: heights(301, 500, validators) };

  it('fits 80 columns: one row per validator, the newest heights at the right, a legend', () => {
    const lines = participationLines(input, plain);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    const rows = lines.filter((l) => /^(\d{3}|f{11}…) /.test(l));
    expect(rows.map((r) => r.split(' ')[0])).toEqual([...ids(6), '099', `${'f'.repeat(11)}…`]);
    // Label 12 + gap 1 leaves 67 columns: heights 434…500, 500 at the right edge.
    const row = rows[0]!;
    expect(row).toHaveLength(80);
    expect(lines[1]!.trimEnd().endsWith('500')).toBe(true);
    expect(lines[1]!.trimEnd()).toHaveLength(80);
    // 099 stakes at 500 (the last cell); 001 missed the heights where it was the one left out.
    expect(rows[6]!.at(-1)).toBe('+');
    const state = statesAt(input.heights.at(-1)!);
    expect(row.at(-1)).toBe(LEGEND.find((l) => l.state === state('001'))!.symbol);
    const legend = lines.slice(lines.indexOf(rows.at(-1)!) + 1).join(' ');
    for (const item of LEGEND) expect(legend).toContain(`${item.symbol} ${item.label}`);
  });

  it.each([40, 57, 80, 132])('no line is wider than %i columns', (width) => {
    for (const color of [false, true])
      for (const line of participationLines(input, { ...plain, width, color }))
        expect(visibleLength(line), line).toBeLessThanOrEqual(width);
  });

  it('colours only on a terminal with colour, and a terminal window holds the whole drawing', () => {
    expect(participationLines(input, plain).join('\n')).not.toContain('\x1b');
    const tty = participationLines(input, { width: 80, color: true, height: 10 });
    expect(tty.join('\n')).toContain('\x1b[32mo\x1b[0m');
    expect(tty.length).toBeLessThanOrEqual(10);
    expect(tty.join('\n')).toMatch(/… 5 more rows/);
  });

  it('marks heights not read, and says so when nothing is recorded', () => {
    const gappy = { ...input, heights: input.heights.filter((h) => h.height !== 498) };
    const lines = participationLines(gappy, plain);
    expect(lines.find((l) => l.startsWith('001'))!.at(-3)).toBe('_');
    expect(lines.join('\n')).toContain('_ not read');
    expect(participationLines({ validators: [], height: 0, heights: [] }, plain)[0]).toMatch(
      /no heights recorded yet/,
    );
  });

  it('writes one line per new height off a terminal (-f)', () => {
    const h = input.heights.at(-1)!;
    expect(heightLine(h, 80)).toBe(
      `h500  proposer ${h.proposer}  signed 7/8  missed ${h.absent![0]}  +099`.slice(0, 80),
    );
    expect(heightLine({ ...h, absent: null }, 80)).toContain('staked set not known');
  });
});

describe('cells.js: what a cell means (the page reads the same module)', () => {
  const h: Height = {
    height: 7,
    hash: 'x',
    time: null,
    proposer: 'p',
    signers: ['p', 's', 'u'],
    absent: ['m'],
    transactions: [
      { kind: 'unstake', validator: 'u', hash: 't1', resultCode: 0 },
      { kind: 'stake', validator: 'n', hash: 't2', resultCode: 0 },
      { kind: 'stake', validator: 'f', hash: 't3', resultCode: 60 },
    ],
  };
  it('applied transactions first, then proposer, signer, missed; else not staked', () => {
    const state = statesAt(h);
    expect(['u', 'n', 'p', 's', 'm', 'f', 'z'].map(state)).toEqual([
      'unstake',
      'stake',
      'proposer',
      'signed',
      'missed',
      'out',
      'out',
    ]);
    expect(statesAt({ ...h, absent: null })('z')).toBe('unknown');
  });
});

describe('screen', () => {
  it('is 80 columns and plain off a terminal, unless COLUMNS says otherwise', () => {
    const out = { write: () => undefined };
    expect(screenOf(out, { env: {} })).toMatchObject({ tty: false, width: 80, color: false });
    expect(screenOf(out, { env: { COLUMNS: '120' } }).width).toBe(120);
    const tty = { write: () => undefined, isTTY: true, columns: 100, rows: 30 };
    expect(screenOf(tty, { env: {} })).toMatchObject({
      tty: true,
      width: 100,
      color: true,
      height: 30,
    });
    expect(screenOf(tty, { env: { NO_COLOR: '1' } }).color).toBe(false);
    expect(screenOf(tty, { env: {}, width: 60 }).width).toBe(60);
  });

  it('fits and wraps by what shows on screen', () => {
    expect(fit('abcdef', 4)).toBe('abc…');
    expect(fit('\x1b[32mab\x1b[0m', 2)).toBe('\x1b[32mab\x1b[0m');
    expect(wrapItems(['aaaa', 'bbbb', 'cccc'], 10)).toEqual(['aaaa  bbbb', 'cccc']);
    expect(header([8, 9, 10, 11, 19, 20])).toBe(' 10 20');
  });

  it('redraws in place on a terminal and appends elsewhere', () => {
    const written: string[] = [];
    const tty = screenOf(
      { write: (t: string) => written.push(t), isTTY: true, columns: 80 },
      { env: {} },
    );
    const region = new LiveRegion(tty);
    region.draw(['a', 'b']);
    region.draw(['c']);
    // Up to the first row, each line written over the old one, the rest below erased.
    expect(written).toEqual(['a\nb\n', '\x1b[2A\r\x1b[2Kc\n\x1b[J']);
    const lines: string[] = [];
    const pipe = new LiveRegion(screenOf({ write: (t: string) => lines.push(t) }, { env: {} }));
    pipe.draw(['a']);
    pipe.draw(['b']);
    expect(lines).toEqual(['a\n', 'b\n']);
  });
});
