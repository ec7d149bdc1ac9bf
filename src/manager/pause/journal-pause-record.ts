// The pause kept in the journal's settings: for static discovery, where one manager runs from
// files on its own disk and there is no Lease (docs/adr/0025-pause-on-the-lease.md).
import type { Journal } from '../journal/journal.ts';
import { journalError } from '../journal/journal-errors.ts';
import type { PauseRecord } from './pause-state.ts';

/** The journal setting that holds the pause (`"true"` / `"false"`). */
export const PAUSED_SETTING = 'paused';

export function journalPauseRecord(journal: Journal): PauseRecord {
  return {
    where: 'the journal',
    read: () => {
      try {
        const value = journal.getSetting(PAUSED_SETTING);
        return Promise.resolve(value === undefined ? undefined : value === 'true');
      } catch (error: unknown) {
        return Promise.reject(journalError(error, journal.path, 'read'));
      }
    },
    write: (paused) => {
      try {
        journal.setSetting(PAUSED_SETTING, String(paused));
        return Promise.resolve();
      } catch (error: unknown) {
        return Promise.reject(journalError(error, journal.path, 'write'));
      }
    },
  };
}
