import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/manager/journal/journal.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { ManualClock } from '../support/manual-clock.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openJournal(): { path: string; journal: Journal } {
  const dir = mkdtempSync(join(tmpdir(), 'cm-journal-'));
  dirs.push(dir);
  const path = join(dir, 'sub', 'journal.sqlite');
  return { path, journal: Journal.open(path, new ManualClock()) };
}

const input = {
  validatorId: '005',
  address: 'aa'.repeat(20),
  kind: 'stake' as const,
  mode: 'rpc' as const,
  txHash: 'h1',
  txHex: '0a',
  nonce: '1',
  fingerprint: 'f',
  reason: 'wanted',
  preparedHeight: 7,
};

describe('Journal', () => {
  it('keeps actions across a reopen: open ones are resumed', () => {
    const { path, journal } = openJournal();
    const prepared = journal.prepare(input);
    journal.markSent(prepared.seq, { height: 8 });
    journal.close();
    const reopened = Journal.open(path, new ManualClock());
    const open = reopened.open();
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({
      validatorId: '005',
      state: 'sent',
      txHash: 'h1',
      sentHeight: 8,
      attempts: 1,
      preparedHeight: 7,
    });
    reopened.close();
  });

  it('refuses a second open action for the same validator', () => {
    const { journal } = openJournal();
    journal.prepare(input);
    expect(() => journal.prepare({ ...input, txHash: 'h2' })).toThrow(/UNIQUE/);
    journal.close();
  });

  it('closes actions as committed, failed or dropped, newest first in pages', () => {
    const { journal } = openJournal();
    const a = journal.prepare(input);
    journal.markCommitted(a.seq, { height: 9, resultCode: 0 });
    const b = journal.prepare({ ...input, kind: 'unstake', txHash: 'h2' });
    journal.markFailed(b.seq, {
      code: 'TX_REJECTED',
      message: 'no',
      terminal: true,
      resultCode: 3,
    });
    const c = journal.prepare({ ...input, validatorId: '006', txHash: 'h3' });
    journal.markDropped(c.seq, 'gone');
    expect(journal.open()).toEqual([]);
    expect(journal.page({ limit: 2 }).map((r) => r.seq)).toEqual([c.seq, b.seq]);
    expect(journal.page({ limit: 2, before: b.seq }).map((r) => r.seq)).toEqual([a.seq]);
    expect(journal.page({ limit: 10, validatorId: '006' })).toHaveLength(1);
    expect(journal.lastApplied('005', 'stake')?.committedHeight).toBe(9);
    expect(journal.get(b.seq)).toMatchObject({ state: 'failed', terminal: true, resultCode: 3 });
    journal.close();
  });

  it('persists settings (the pause switch)', () => {
    const { path, journal } = openJournal();
    journal.setSetting('paused', 'true');
    journal.close();
    const reopened = Journal.open(path, new ManualClock());
    expect(reopened.getSetting('paused')).toBe('true');
    reopened.close();
  });

  it('ActionBook indexes open actions, the newest per validator and stake heights', () => {
    const { journal } = openJournal();
    const book = new ActionBook(journal);
    const seen: string[] = [];
    book.onChange((r) => seen.push(r.state));
    const a = book.prepare(input);
    expect(book.open.get('005')?.seq).toBe(a.seq);
    book.markSent(a.seq, { height: 8 });
    book.markCommitted(a.seq, { height: 9, resultCode: 0 });
    expect(book.open.size).toBe(0);
    expect(book.stakeHeights.get('005')).toBe(9);
    expect(book.latest.get('005')?.state).toBe('committed');
    expect(seen).toEqual(['prepared', 'sent', 'committed']);
    expect(new ActionBook(journal).stakeHeights.get('005')).toBe(9);
    journal.close();
  });
  it('group commit: actions prepared in one tick share a transaction, on disk before prepareDurably resolves', async () => {
    const { path, journal } = openJournal();
    const book = new ActionBook(journal);
    const onDisk = (): number => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM actions').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const first = book.prepareDurably(input);
    const second = book.prepareDurably({ ...input, validatorId: '006', txHash: 'h2' });
    // Indexed at once (a concurrent decision counts them), not yet committed.
    expect(book.open.size).toBe(2);
    expect(onDisk()).toBe(0);
    const [a] = await Promise.all([first, second]);
    expect(onDisk()).toBe(2);
    // A grouped markSent is visible at once and on disk after the tick.
    book.markSent(a.seq, { height: 8 });
    expect(journal.get(a.seq)).toMatchObject({ state: 'sent', attempts: 1 });
    await journal.committed();
    journal.close();
    const reopened = Journal.open(path, new ManualClock());
    expect(reopened.get(a.seq)).toMatchObject({ state: 'sent', attempts: 1 });
    expect(reopened.open()).toHaveLength(2);
    reopened.close();
  });

  it("a block's outcomes share one commit: indexed at once, on disk after the tick", async () => {
    const { path, journal } = openJournal();
    const book = new ActionBook(journal);
    const a = book.prepare(input);
    const b = book.prepare({ ...input, validatorId: '006', txHash: 'h2' });
    const states = (): string[] => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return (
          db.prepare('SELECT state FROM actions ORDER BY seq').all() as { state: string }[]
        ).map((row) => row.state);
      } finally {
        db.close();
      }
    };
    book.recordOutcome(a.seq, { committed: { height: 9, resultCode: 0 } });
    book.recordOutcome(b.seq, {
      failed: { code: 'TX_REJECTED', message: 'code 54', terminal: true, resultCode: 54 },
    });
    // The indexes see both at once (the planner may act on them in this tick)…
    expect(book.open.size).toBe(0);
    expect(book.stakeHeights.get('005')).toBe(9);
    // …and both reach the file in one transaction, after the tick.
    expect(states()).toEqual(['prepared', 'prepared']);
    await journal.committed();
    expect(states()).toEqual(['committed', 'failed']);
    journal.close();
  });

  it('a write that is not grouped commits the open group before it returns', () => {
    const { path, journal } = openJournal();
    const a = journal.prepare(input, { grouped: true });
    journal.markCommitted(a.seq, { height: 9, resultCode: 0 });
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare('SELECT state FROM actions').all()).toEqual([{ state: 'committed' }]);
    db.close();
    journal.close();
  });
});

describe('the journal file', () => {
  it('is created readable by its owner only (0600), and so are its -wal and -shm files', () => {
    // Before: 0644 (the umask's default) while it holds signed transactions.
    const { path, journal } = openJournal();
    journal.prepare(input);
    const mode = (file: string): number => statSync(file).mode & 0o777;
    expect(mode(path)).toBe(0o600);
    expect(mode(`${path}-wal`)).toBe(0o600);
    expect(mode(`${path}-shm`)).toBe(0o600);
    journal.close();
  });

  it("narrows an older journal's files to 0600 when it opens them", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-journal-'));
    dirs.push(dir);
    const path = join(dir, 'journal.sqlite');
    Journal.open(path, new ManualClock()).close();
    chmodSync(path, 0o644);
    writeFileSync(`${path}-wal`, '');
    chmodSync(`${path}-wal`, 0o666);
    const journal = Journal.open(path, new ManualClock());
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    journal.close();
  });
});
