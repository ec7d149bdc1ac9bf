// The devnet's validators board: sized to the terminal (columns chosen by width, reasons cut at a
// word, whole with --wide), redrawn on a resize; plain lines, one per phase change, off a terminal.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { StatusBoard } from '../../src/devnet/status-board.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';

/** What was drawn after going up `rows` rows (the redraw), without its line erases. */
function redrawn(text: string, rows: number): string {
  const parts = text.split(`\x1b[${rows}A\r`);
  expect(parts.length, `a redraw going up ${rows} rows`).toBeGreaterThan(1);
  return parts.at(-1)!.replaceAll('\x1b[2K', '').replaceAll('\x1b[J', '');
}

function out(isTTY: boolean, columns = 80) {
  const emitter = new EventEmitter();
  let text = '';
  return Object.assign(emitter, {
    isTTY,
    columns,
    rows: 40,
    write: (chunk: string) => {
      text += chunk;
      return true;
    },
    text: () => text,
  });
}

function row(id: string, phase: ValidatorStatus['phase'], reason: string): ValidatorStatus {
  return {
    key: id,
    id,
    address: `addr-${id}`,
    pod: `validator-${Number(id) - 1}`,
    ready: true,
    wanted: true,
    chain: { status: 'staked', stakedAmount: null, unstakingHeight: null, lastSignedHeight: null },
    phase,
    reason,
    waitingFor: null,
    pendingAction: null,
    lastAction: null,
  };
}

const LONG =
  'pacing: 1 validator(s) joining or silent in a set of 6 with 5 voting; no more may join until they vote';
const board = (o: ReturnType<typeof out>, wide = false) =>
  new StatusBoard({ url: 'http://127.0.0.1:1', out: o, wide, env: {} });

describe('the devnet board', () => {
  it('at 80 columns: one line per validator, none wider, the chain column left out, a cut reason said', () => {
    const o = out(true, 80);
    board(o).show([row('001', 'active', 'staked and signing'), row('006', 'pending', LONG)]);
    const lines = o.text().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^validators \(\d\d:\d\d:\d\d\):$/);
    expect(lines.slice(1)).toEqual([
      'ID   POD          PHASE    REASON',
      '001  validator-0  active   staked and signing',
      '006  validator-5  pending  pacing: 1 validator(s) joining or silent in a set…',
      '(reasons cut to fit: cluster-manager status, or devnet --wide)',
    ]);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
  });

  it('wide: the reason whole, wrapped under its column; at 120 columns the chain column too', () => {
    const o = out(true, 80);
    board(o, true).show([row('006', 'pending', LONG)]);
    expect(o.text().trimEnd().split('\n').slice(2)).toEqual([
      '006  validator-5  pending  pacing: 1 validator(s) joining or silent in a set of',
      '                           6 with 5 voting; no more may join until they vote',
    ]);
    const w = out(true, 120);
    board(w).show([row('001', 'active', 'staked and signing')]);
    expect(w.text().split('\n')[1]).toBe('ID   POD          CHAIN   PHASE   REASON');
  });

  it('at 60 columns keeps the id and the phase, leaving out the pod, whatever the reasons need; the note wraps at a word', () => {
    const o = out(true, 60);
    board(o).show([row('001', 'active', 'staked and signing (last signature at height 27)')]);
    expect(o.text().trimEnd().split('\n').slice(1)).toEqual([
      'ID   PHASE   REASON',
      '001  active  staked and signing (last signature at height…',
      '(reasons cut to fit: cluster-manager status, or devnet',
      '--wide)',
    ]);
  });

  it('redraws for the new width on a resize, erasing the rows the old drawing took', () => {
    const o = out(true, 120);
    const b = board(o);
    b.start(); // listens for resizes (its first fetch fails quietly)
    b.show([row('006', 'pending', LONG)]);
    o.columns = 80;
    o.emit('resize');
    b.stop();
    // Title, header, the row (112 characters: two rows at 80), the note.
    const after = redrawn(o.text(), 5);
    expect(after.trimEnd().split('\n').slice(1, 3)).toEqual([
      'ID   POD          PHASE    REASON',
      '006  validator-5  pending  pacing: 1 validator(s) joining or silent in a set…',
    ]);
    expect(o.listenerCount('resize')).toBe(0);
  });

  it('off a terminal: one plain line per phase change, the reason whole, no escapes', () => {
    const o = out(false);
    const b = board(o);
    b.show([row('005', 'pending', LONG)]);
    b.show([row('005', 'pending', 'another reason, same phase')]);
    b.show([row('005', 'staking', 'stake sent at height 9')]);
    const lines = o.text().trimEnd().split('\n');
    expect(lines.map((l) => l.slice(9))).toEqual([
      `005 pending (${LONG})`,
      '005 pending → staking (stake sent at height 9)',
    ]);
    expect(o.text()).not.toContain('\x1b');
  });
});
