// What a failed journal operation means, as a catalogue error that names the file and the cause:
// node:sqlite throws `ERR_SQLITE_ERROR` with SQLite's result code (`errcode`) and its text, which
// said nothing of the file and fell outside the catalogue (issue 30, item 9). Primary result codes
// (https://www.sqlite.org/rescode.html): 11 SQLITE_CORRUPT and 26 SQLITE_NOTADB → JOURNAL_CORRUPT,
// 13 SQLITE_FULL (the disk, or the file's size limit) → JOURNAL_FULL, 19 SQLITE_CONSTRAINT (a bug
// of ours) → INTERNAL, anything else → JOURNAL_UNAVAILABLE.
import { describeError, isManagerError, ManagerError } from '../errors.ts';

const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CONSTRAINT = 19;
const SQLITE_NOTADB = 26;

/** SQLite's primary result code of a node:sqlite error (the low byte of an extended one). */
export function sqliteCode(error: unknown): number | undefined {
  const e = error as { code?: unknown; errcode?: unknown } | null;
  if (e === null || typeof e !== 'object' || e.code !== 'ERR_SQLITE_ERROR') return undefined;
  return typeof e.errcode === 'number' ? e.errcode & 0xff : undefined;
}

/**
 * The catalogue error for `error`, thrown while `doing` (e.g. "open", "write") the journal at
 * `path`. A ManagerError passes through unchanged.
 */
export function journalError(error: unknown, path: string, doing: string): ManagerError {
  if (isManagerError(error)) return error;
  const code = sqliteCode(error);
  // SQLite's own message (sqlite3_errmsg: "UNIQUE constraint failed: actions.validator_id"),
  // more precise than its code's text (errstr).
  const cause = error instanceof Error ? error.message : describeError(error);
  const about = `could not ${doing} the journal ${path}: ${cause}`;
  if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB)
    return new ManagerError(
      'JOURNAL_CORRUPT',
      `${about} (the file is damaged or not a journal); move it aside (or delete it) and start again: a new journal is rebuilt from the chain`,
      { cause: error, details: { path } },
    );
  if (code === SQLITE_FULL)
    return new ManagerError(
      'JOURNAL_FULL',
      `${about} (no space left on its volume, or its size limit reached); no action is taken until it can be written: free space or raise the limit`,
      { cause: error, details: { path } },
    );
  // A constraint broken is a bug of ours (one open action per validator), not the file's.
  if (code === SQLITE_CONSTRAINT)
    return new ManagerError('INTERNAL', about, { cause: error, details: { path } });
  return new ManagerError('JOURNAL_UNAVAILABLE', about, { cause: error, details: { path } });
}
