// Opening the journal at start (issue 30, item 9): a file that is damaged or is not a journal
// (JOURNAL_CORRUPT) is moved aside — renamed to `<path>.corrupt-<time>` with its -wal and -shm —
// and a new, empty journal started, as a new pod would start with one: the manager rebuilds its
// view from the chain, and nothing is sent twice for what the chain or its mempool already shows
// (docs/adr/0026-journal-failures.md). Before, such a file made the manager exit with `unexpected
// Error` and no path or cause: a crash loop in a pod. Any other failure (a journal of a newer
// version, a full disk, no permission) is thrown as its named error: nothing is moved.
import { existsSync, renameSync } from 'node:fs';
import type { Clock } from '../clock.ts';
import { isManagerError, ManagerError } from '../errors.ts';
import { Journal } from './journal.ts';

export interface OpenedJournal {
  readonly journal: Journal;
  /** The damaged file moved aside, and why; undefined when the journal opened as it was. */
  readonly setAside: { readonly to: string; readonly reason: string } | undefined;
}

export function openJournal(
  path: string,
  clock: Clock,
  options: { maxBytes?: number } = {},
): OpenedJournal {
  try {
    return { journal: Journal.open(path, clock, options), setAside: undefined };
  } catch (error: unknown) {
    if (!isManagerError(error, 'JOURNAL_CORRUPT') || path === ':memory:') throw error;
    const stamp = new Date(clock.now()).toISOString().replace(/[:.]/g, '-');
    const to = `${path}.corrupt-${stamp}`;
    try {
      for (const suffix of ['', '-wal', '-shm'])
        if (existsSync(path + suffix)) renameSync(path + suffix, to + suffix);
    } catch (cause: unknown) {
      throw new ManagerError(
        'JOURNAL_CORRUPT',
        `${error.message}; and it could not be moved aside to ${to}: ${String(cause)}`,
        { cause, details: { path } },
      );
    }
    const reason = `${error.message.replace(/; move it aside.*$/, '')}; moved aside, a new journal started`;
    return { journal: Journal.open(path, clock, options), setAside: { to, reason } };
  }
}
