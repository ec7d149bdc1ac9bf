// ActionBook over an in-memory journal: the indexes the planner reads (open action, newest action
// and last stake height per validator) follow every write, and a book built again over the same
// journal (a restarted manager) finds exactly what the rows say — nothing kept only in memory.
import { describe, expect, it } from 'vitest';
import { Journal, type PrepareInput } from '../../src/manager/journal/journal.ts';
import type { ActionRecord } from '../../src/manager/model.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { ManualClock } from '../support/manual-clock.ts';

function action(id: string, fields: Partial<PrepareInput> = {}): PrepareInput {
  return {
    validatorId: id,
    address: `addr-${id}`,
    kind: 'stake',
    mode: 'rpc',
    txHash: `hash-${id}-${fields.kind ?? 'stake'}`,
    txHex: '0a',
    nonce: '1',
    fingerprint: 'f',
    reason: 'wanted',
    preparedHeight: 10,
    ...fields,
  };
}

function summary(map: ReadonlyMap<string, ActionRecord>): Record<string, string> {
  return Object.fromEntries(
    [...map].map(([id, r]): [string, string] => [id, `${r.seq}:${r.kind}:${r.state}`]),
  );
}

/** Writes a history of five validators through a book. */
function history(book: ActionBook): void {
  // 001: staked at 12, then unstaked at 30 (its stake height stays 12).
  const a = book.prepare(action('001'));
  book.markSent(a.seq, { height: 11 });
  book.markCommitted(a.seq, { height: 12, resultCode: 0 });
  const b = book.prepare(action('001', { kind: 'unstake', preparedHeight: 29 }));
  book.markCommitted(b.seq, { height: 30, resultCode: 0 });
  // 002: a stake sent and not yet in a block (open, state sent).
  const c = book.prepare(action('002'));
  book.markSent(c.seq, { height: 13 });
  // 003: a stake prepared only (crash between journal and send: open, state prepared).
  book.prepare(action('003'));
  // 004: a stake that failed terminally (not open, no stake height).
  const d = book.prepare(action('004'));
  book.markFailed(d.seq, { code: 'STAKE_BELOW_MINIMUM', message: 'low', terminal: true });
  // 005: dropped, then staked again at 20.
  const e = book.prepare(action('005'));
  book.markDropped(e.seq, 'gone from the mempool');
  const f = book.prepare(action('005', { txHash: 'hash-005-again' }));
  book.markCommitted(f.seq, { height: 20, resultCode: 0 });
}

describe('ActionBook', () => {
  it('indexes open actions, the newest action and the last stake height of each validator', () => {
    const book = new ActionBook(Journal.open(':memory:', new ManualClock()));
    history(book);
    expect(summary(book.open)).toEqual({ '002': '3:stake:sent', '003': '4:stake:prepared' });
    expect(summary(book.latest)).toEqual({
      '001': '2:unstake:committed',
      '002': '3:stake:sent',
      '003': '4:stake:prepared',
      '004': '5:stake:failed',
      '005': '7:stake:committed',
    });
    expect(Object.fromEntries(book.stakeHeights)).toEqual({ '001': 12, '005': 20 });
  });

  it('restart: a book built over the same journal finds the same indexes', () => {
    const journal = Journal.open(':memory:', new ManualClock());
    const before = new ActionBook(journal);
    history(before);
    const after = new ActionBook(journal);
    expect(summary(after.open)).toEqual(summary(before.open));
    expect(summary(after.latest)).toEqual(summary(before.latest));
    expect(Object.fromEntries(after.stakeHeights)).toEqual(Object.fromEntries(before.stakeHeights));
    // The recovered open action carries what following it needs: its hash, bytes and heights.
    expect(after.open.get('002')).toMatchObject({
      txHash: 'hash-002-stake',
      txHex: '0a',
      sentHeight: 13,
      preparedHeight: 10,
      attempts: 1,
    });
    // And it is followed to its end through the new book.
    after.markCommitted(after.open.get('002')!.seq, { height: 14, resultCode: 0 });
    expect(after.open.has('002')).toBe(false);
    expect(after.stakeHeights.get('002')).toBe(14);
  });

  it('reload() reads the indexes from the journal again, dropping what the rows do not hold', () => {
    const journal = Journal.open(':memory:', new ManualClock());
    const book = new ActionBook(journal);
    history(book);
    // Another writer of the same journal (as after a group commit that failed and was rolled
    // back, the file is the truth): the book's indexes are rebuilt from it, not merged.
    journal.markCommitted(book.open.get('003')!.seq, { height: 40, resultCode: 0 });
    expect(book.open.has('003')).toBe(true);
    book.reload();
    expect(summary(book.open)).toEqual({ '002': '3:stake:sent' });
    expect(book.stakeHeights.get('003')).toBe(40);
  });

  it('a late write to an older action does not hide the newer one', () => {
    const book = new ActionBook(Journal.open(':memory:', new ManualClock()));
    const old = book.prepare(action('007'));
    book.markCommitted(old.seq, { height: 12, resultCode: 0 });
    const newer = book.prepare(action('007', { kind: 'unstake', txHash: 'h-unstake' }));
    // A stale follow-up of the old action lands now (e.g. a hash recorded late).
    book.recordHash(old.seq, 'late-hash');
    expect(book.open.get('007')?.seq).toBe(newer.seq);
    expect(book.latest.get('007')?.seq).toBe(newer.seq);
    book.markDropped(old.seq, 'late');
    expect(book.open.get('007')?.seq).toBe(newer.seq);
    expect(book.latest.get('007')).toMatchObject({ seq: newer.seq, kind: 'unstake' });
  });

  it('only a committed stake with a height sets the stake height', () => {
    const book = new ActionBook(Journal.open(':memory:', new ManualClock()));
    const failed = book.prepare(action('008'));
    book.markFailed(failed.seq, {
      code: 'TX_REJECTED',
      message: 'x',
      terminal: true,
      resultCode: 3,
    });
    const unstake = book.prepare(action('008', { kind: 'unstake', txHash: 'u' }));
    book.markCommitted(unstake.seq, { height: 50, resultCode: 0 });
    expect(book.stakeHeights.has('008')).toBe(false);
    const stake = book.prepare(action('008', { txHash: 's' }));
    book.markCommitted(stake.seq, { height: 60, resultCode: 0 });
    expect(book.stakeHeights.get('008')).toBe(60);
    expect(new ActionBook(book.journal).stakeHeights.get('008')).toBe(60);
  });

  it('knows who staked each address last, and when; a restarted book finds the same', async () => {
    const clock = new ManualClock();
    const book = new ActionBook(Journal.open(':memory:', clock));
    // K3 staked by 004 (a moved key), then by 003 (the move undone); a failed stake by 005 of it
    // and a stake of it still open change nothing.
    const byFour = book.prepare(action('004', { address: 'K3', txHash: 'a' }));
    book.markCommitted(byFour.seq, { height: 10, resultCode: 0 });
    await clock.advance(5_000);
    const byThree = book.prepare(action('003', { address: 'K3', txHash: 'b' }));
    book.markCommitted(byThree.seq, { height: 12, resultCode: 0 });
    const at = clock.now();
    await clock.advance(1_000);
    const failed = book.prepare(action('005', { address: 'K3', txHash: 'c' }));
    book.markFailed(failed.seq, {
      code: 'TX_REJECTED',
      message: 'x',
      terminal: true,
      resultCode: 3,
    });
    book.prepare(action('006', { address: 'K3', txHash: 'd' }));
    expect(book.lastStakes.get('K3')).toEqual({ id: '003', at, seq: byThree.seq });
    expect(new ActionBook(book.journal).lastStakes.get('K3')).toEqual(book.lastStakes.get('K3'));
  });

  it('tells every listener about every change, in order', () => {
    const book = new ActionBook(Journal.open(':memory:', new ManualClock()));
    const a: string[] = [];
    const b: string[] = [];
    book.onChange((r) => a.push(`${r.validatorId}:${r.state}:${r.attempts}`));
    book.onChange((r) => b.push(r.state));
    const x = book.prepare(action('009'));
    book.markSent(x.seq, { height: 11 });
    book.markResent(x.seq, 14);
    book.markCommitted(x.seq, { height: 15, resultCode: 0 });
    expect(a).toEqual(['009:prepared:0', '009:sent:1', '009:sent:2', '009:committed:2']);
    expect(b).toEqual(['prepared', 'sent', 'sent', 'committed']);
  });

  it('prepareDurably: indexed at once (a concurrent decision counts it), resolved once committed', async () => {
    const journal = Journal.open(':memory:', new ManualClock());
    const book = new ActionBook(journal);
    let resolved = false;
    const pending = book.prepareDurably(action('010')).then((r) => {
      resolved = true;
      return r;
    });
    expect(book.open.has('010')).toBe(true);
    expect(resolved).toBe(false);
    const record = await pending;
    expect(record).toMatchObject({ validatorId: '010', state: 'prepared' });
    expect(new ActionBook(journal).open.get('010')?.seq).toBe(record.seq);
  });

  it('refuses a second open action for a validator and leaves the indexes as they were', () => {
    const book = new ActionBook(Journal.open(':memory:', new ManualClock()));
    const first = book.prepare(action('011'));
    expect(() => book.prepare(action('011', { txHash: 'other' }))).toThrow(/UNIQUE/);
    expect(book.open.get('011')?.seq).toBe(first.seq);
    expect(book.latest.get('011')?.seq).toBe(first.seq);
  });
});
