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

describe('a journal written by the previous version (schema 2)', () => {
  // The schema of schema version 2, verbatim (src/manager/journal/journal.ts at dbdb665): an
  // action's mode was one of 'rpc' and 'cli'.
  const VERSION_2 = `
CREATE TABLE IF NOT EXISTS actions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  validator_id TEXT NOT NULL,
  address TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('stake', 'unstake')),
  state TEXT NOT NULL CHECK (state IN ('prepared', 'sent', 'committed', 'failed', 'dropped')),
  mode TEXT NOT NULL CHECK (mode IN ('rpc', 'cli')),
  tx_hash TEXT,
  tx_hex TEXT,
  nonce TEXT,
  fingerprint TEXT NOT NULL,
  reason TEXT NOT NULL,
  prepared_height INTEGER NOT NULL,
  sent_height INTEGER,
  committed_height INTEGER,
  result_code INTEGER,
  error_code TEXT,
  error TEXT,
  terminal INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS actions_one_open ON actions (validator_id) WHERE state IN ('prepared', 'sent');
CREATE INDEX IF NOT EXISTS actions_by_validator ON actions (validator_id, seq);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hook_runs (
  action_key TEXT NOT NULL,
  hook TEXT NOT NULL,
  point TEXT NOT NULL,
  validator_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'interrupted')),
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (action_key, hook)
);
CREATE TABLE IF NOT EXISTS key_observations (
  validator_id TEXT PRIMARY KEY,
  address TEXT NOT NULL,
  observed_at TEXT NOT NULL
);
`;

  function versionTwoFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'cm-journal-'));
    dirs.push(dir);
    const path = join(dir, 'journal.sqlite');
    const db = new DatabaseSync(path);
    db.exec(VERSION_2);
    const insert = db.prepare(
      `INSERT INTO actions (validator_id, address, kind, state, mode, tx_hash, tx_hex, nonce,
         fingerprint, reason, prepared_height, sent_height, committed_height, result_code,
         terminal, attempts, created_at, updated_at)
       VALUES (?, ?, 'stake', ?, ?, ?, NULL, NULL, 'f', 'wanted', 5, 6, ?, ?, 0, 1, 't', 't')`,
    );
    insert.run('001', 'aa'.repeat(20), 'committed', 'cli', null, 7, 0);
    insert.run('002', 'bb'.repeat(20), 'sent', 'rpc', 'h2', null, null);
    insert.run('003', 'cc'.repeat(20), 'committed', 'rpc', 'h3', 8, 0);
    db.exec("DELETE FROM actions WHERE validator_id = '003'"); // seq 3 was handed out
    db.exec("INSERT INTO settings (name, value) VALUES ('chain.id', 'localnet')");
    db.exec('PRAGMA user_version = 2');
    db.close();
    return path;
  }

  it('opens with its rows as they were, and then takes a transport name of any chain', () => {
    const path = versionTwoFile();
    const journal = Journal.open(path, new ManualClock());
    expect(journal.get(1)).toMatchObject({ validatorId: '001', mode: 'cli', state: 'committed' });
    expect(journal.open()).toEqual([
      expect.objectContaining({ seq: 2, validatorId: '002', mode: 'rpc', txHash: 'h2' }),
    ]);
    expect(journal.chain()).toBeUndefined(); // only the id was written: not a binding
    expect(journal.getSetting('chain.id')).toBe('localnet');
    // Version 2 refused any mode but 'rpc' and 'cli' (CHECK constraint failed).
    const toy = journal.prepare({ ...input, validatorId: 'val-4', mode: 'toy-json' });
    expect(toy).toMatchObject({ mode: 'toy-json' });
    expect(toy.seq).toBe(4); // a sequence number handed out before is not handed out again
    // One open action per validator still holds after the rebuild.
    expect(() => journal.prepare({ ...input, validatorId: 'val-4' })).toThrow(/UNIQUE/);
    journal.close();
    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
    db.close();
    const reopened = Journal.open(path, new ManualClock());
    expect(reopened.get(4)).toMatchObject({ mode: 'toy-json' });
    reopened.close();
  });

  it('too big for its size limit to be upgraded: JOURNAL_FULL naming the upgrade, the file as it was', () => {
    const path = versionTwoFile();
    const db = new DatabaseSync(path);
    const fill = db.prepare(
      `INSERT INTO actions (validator_id, address, kind, state, mode, fingerprint, reason,
         prepared_height, terminal, attempts, created_at, updated_at)
       VALUES (?, ?, 'stake', 'failed', 'rpc', ?, 'wanted', 5, 1, 1, 't', 't')`,
    );
    db.exec('BEGIN');
    for (let i = 0; i < 400; i++) fill.run(`v${i}`, 'dd'.repeat(20), 'x'.repeat(1_000));
    db.exec('COMMIT');
    db.close();
    const size = statSync(path).size;
    // Room for the file, not for a second copy of its actions table.
    const attempt = () => Journal.open(path, new ManualClock(), { maxBytes: size + 64 * 1024 });
    expect(attempt).toThrow(
      expect.objectContaining({
        code: 'JOURNAL_FULL',
        message: expect.stringMatching(
          /^could not upgrade \(from version 2, which copies its actions table once: it needs room for it twice\) the journal .*journal\.sqlite: .*raise the limit$/,
        ),
      }),
    );
    // Nothing was changed: still version 2, with its rows; with room, it upgrades.
    const after = new DatabaseSync(path);
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
    expect(after.prepare('SELECT COUNT(*) AS n FROM actions').get()).toEqual({ n: 402 });
    after.close();
    const journal = Journal.open(path, new ManualClock(), { maxBytes: size * 3 });
    expect(journal.get(1)).toMatchObject({ validatorId: '001', mode: 'cli' });
    journal.close();
  });

  it('refuses an empty transport name', () => {
    const { journal } = openJournal();
    expect(() => journal.prepare({ ...input, mode: '' })).toThrow(/CHECK/);
    journal.close();
  });
});
