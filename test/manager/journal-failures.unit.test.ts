// A journal that cannot be used (issue 30, item 9): a damaged file (garbage, or a real journal
// cut short) is JOURNAL_CORRUPT naming its path and SQLite's words, and at start it is moved
// aside for a new one; a full journal (its size limit, which SQLite reports as it reports a full
// disk: code 13, "database or disk is full") is JOURNAL_FULL on every kind of write, the grouped
// commit an action waits for included; other failures are JOURNAL_UNAVAILABLE. Before, all of
// them were node:sqlite's bare `ERR_SQLITE_ERROR` ("unexpected Error" at start).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalogueCode, ManagerError } from '../../src/manager/errors.ts';
import { journalError, sqliteCode } from '../../src/manager/journal/journal-errors.ts';
import { JournalHealth } from '../../src/manager/journal/journal-health.ts';
import { openJournal } from '../../src/manager/journal/journal-open.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { Wait, type Decision } from '../../src/manager/planner/plan.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { ManualClock } from '../support/manual-clock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cm-journal-failures-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function prepareInput(id: string, hexBytes = 400) {
  return {
    validatorId: id,
    address: 'ab'.repeat(20),
    kind: 'stake' as const,
    mode: 'rpc' as const,
    txHash: 'cd'.repeat(32),
    txHex: 'ef'.repeat(hexBytes),
    fingerprint: 'f',
    reason: 'wanted',
    preparedHeight: 10,
  };
}

describe('a damaged journal', () => {
  it('garbage: JOURNAL_CORRUPT with the path and the cause; at start it is moved aside and a new journal begins', () => {
    const path = join(dir, 'journal.sqlite');
    writeFileSync(path, Buffer.alloc(5_000, 7));
    let thrown: unknown;
    try {
      Journal.open(path, new ManualClock());
    } catch (error: unknown) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ManagerError);
    expect(thrown).toMatchObject({
      code: 'JOURNAL_CORRUPT',
      message: expect.stringContaining(
        `could not open the journal ${path}: file is not a database`,
      ),
    });
    const opened = openJournal(path, new ManualClock());
    expect(opened.setAside?.to).toMatch(/journal\.sqlite\.corrupt-2026-11-29T12-00-00-000Z$/);
    expect(opened.setAside?.reason).toMatch(
      /file is not a database.*moved aside, a new journal started$/,
    );
    expect(readFileSync(opened.setAside?.to ?? '')).toEqual(Buffer.alloc(5_000, 7)); // kept
    expect(opened.journal.page({ limit: 10 })).toEqual([]);
    opened.journal.close();
  });

  it('a real journal cut short: JOURNAL_CORRUPT (found at open, not at the first read)', () => {
    const path = join(dir, 'journal.sqlite');
    const journal = Journal.open(path, new ManualClock());
    for (let i = 0; i < 40; i++) journal.prepare(prepareInput(String(i).padStart(3, '0')));
    journal.close();
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, Math.floor(bytes.length / 2)));
    expect(() => Journal.open(path, new ManualClock())).toThrow(
      expect.objectContaining({ code: 'JOURNAL_CORRUPT' }) as Error,
    );
    const opened = openJournal(path, new ManualClock());
    expect(opened.setAside).toBeDefined();
    // The file and its -wal and -shm, under one name.
    expect(readdirSync(dir).filter((f) => /\.corrupt-[\dT-]+Z$/.test(f))).toHaveLength(1);
    opened.journal.close();
  });

  it('a path that cannot hold a journal: JOURNAL_UNAVAILABLE naming it; nothing is moved', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const path = join(file, 'journal.sqlite');
    expect(() => openJournal(path, new ManualClock())).toThrow(
      expect.objectContaining({
        code: 'JOURNAL_UNAVAILABLE',
        message: expect.stringContaining(`could not open the journal ${path}`) as string,
      }) as Error,
    );
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('a full journal', () => {
  it('every write fails with JOURNAL_FULL naming the file, the commit an action waits for included; freed space works again', async () => {
    const path = join(dir, 'journal.sqlite');
    const journal = Journal.open(path, new ManualClock(), { maxBytes: 64 * 1024 });
    const book = new ActionBook(journal);
    let full: unknown;
    let n = 0;
    try {
      for (; n < 1_000; n++)
        await book.prepareDurably({ ...prepareInput(String(n + 1).padStart(3, '0'), 2_000) });
    } catch (error: unknown) {
      full = error;
    }
    expect(n).toBeGreaterThan(3);
    expect(n).toBeLessThan(1_000);
    expect(full).toMatchObject({
      code: 'JOURNAL_FULL',
      message: expect.stringContaining(
        `could not write the journal ${path}: database or disk is full`,
      ),
    });
    expect(catalogueCode(full)).toBe('JOURNAL_FULL');
    expect(() => journal.setSetting('x', 'y'.repeat(20_000))).toThrow(
      expect.objectContaining({ code: 'JOURNAL_FULL' }) as Error,
    );
    // Room again (another process deletes rows: the manager's journal reuses the pages).
    const other = new DatabaseSync(path);
    other.exec("DELETE FROM actions WHERE validator_id <> '001'");
    other.close();
    await book.prepareDurably(prepareInput('999'));
    expect(book.open.has('999')).toBe(true);
    journal.close();
  });

  it('SQLite says a full disk and a size limit alike (code 13); its other codes map as documented', () => {
    const db = new DatabaseSync(':memory:');
    db.exec('PRAGMA max_page_count = 2; CREATE TABLE t (x TEXT)');
    let raw: unknown;
    try {
      for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(4_000));
    } catch (error: unknown) {
      raw = error;
    }
    expect(raw).toMatchObject({ code: 'ERR_SQLITE_ERROR', errstr: 'database or disk is full' });
    expect(sqliteCode(raw)).toBe(13);
    const as = (errcode: number) =>
      journalError(
        Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode }),
        '/j',
        'write',
      ).code;
    expect([as(11), as(26), as(13), as(19), as(10), as(8), as(266)]).toEqual([
      'JOURNAL_CORRUPT',
      'JOURNAL_CORRUPT',
      'JOURNAL_FULL',
      'INTERNAL', // a constraint broken: a bug of ours, not the file's
      'JOURNAL_UNAVAILABLE',
      'JOURNAL_UNAVAILABLE',
      'JOURNAL_UNAVAILABLE', // SQLITE_IOERR_READ: an extended code of 10
    ]);
    expect(catalogueCode(raw)).toBe('INTERNAL'); // a raw SQLite error is not a catalogue code
    expect(existsSync('/j')).toBe(false);
  });
});

describe('JournalHealth', () => {
  const stake: Decision = {
    key: '005',
    id: '005',
    address: 'ab',
    wanted: true,
    chainStatus: 'absent',
    action: 'stake',
    waitingFor: undefined,
    phase: 'pending',
    code: undefined,
    reason: 'wanted, Ready and synced; not staked',
    signing: false,
  } as unknown as Decision;

  it('keeps the last failed write until one succeeds, and names it in every action that would go', () => {
    const health = new JournalHealth();
    expect(health.failed(new Error('ECONNRESET'), 0)).toBe(false);
    const full = new ManagerError(
      'JOURNAL_FULL',
      'could not write the journal /j: database or disk is full',
    );
    expect(health.failed(full, Date.parse('2026-12-03T10:00:00Z'))).toBe(true);
    health.failed(full, Date.parse('2026-12-03T10:05:00Z'));
    expect(health.failure).toEqual({
      code: 'JOURNAL_FULL',
      message: full.message,
      since: '2026-12-03T10:00:00.000Z',
    });
    expect(health.overlay(stake).reason).toBe(
      `JOURNAL_FULL: ${full.message}; would stake: wanted, Ready and synced; not staked`,
    );
    const waiting = { ...stake, waitingFor: Wait.paused };
    expect(health.overlay(waiting)).toBe(waiting);
    health.wrote();
    expect(health.failure).toBeUndefined();
    expect(health.overlay(stake)).toBe(stake);
  });
});
