// Text rendering for the debug CLI: tables, and live scale progress (redrawn on a terminal,
// plain lines otherwise).
import type { ValidatorStatus } from '../status.ts';

/** A fixed-width table with a header row. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function statusTable(validators: readonly ValidatorStatus[]): string {
  return table(
    ['ID', 'POD', 'READY', 'WANTED', 'CHAIN', 'PHASE', 'REASON'],
    validators.map((v) => [
      v.id ?? v.key.slice(0, 12),
      v.pod ?? '-',
      v.ready ? 'yes' : 'no',
      v.wanted ? 'yes' : 'no',
      v.chain.status,
      v.phase,
      v.reason,
    ]),
  );
}

/**
 * Whether a validator is where a scale wants it, in the manager's own phases — the one vocabulary
 * of every display (`status`, `watch`, the devnet's board, scale progress; defined by `Phase` in
 * planner/plan.ts and explained in docs/operations.md, "Phases"): a wanted one `active` (or
 * `staked` when the scale waits only for stakes), a leaving one `unstaked` (out of the set).
 */
export function isSettled(v: ValidatorStatus, wait: 'none' | 'staked' | 'active'): boolean {
  if (!v.wanted) return v.phase === 'unstaked';
  return v.phase === 'active' || (wait !== 'active' && v.phase === 'staked');
}

/** "0.4 s", "12 s", "3 min", "2 h 5 min": how long ago, for a person. */
export function ageText(ms: number): string {
  if (ms < 0) return '0 s';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  const hours = Math.floor(ms / 3_600_000);
  return `${hours} h ${Math.round((ms - hours * 3_600_000) / 60_000)} min`;
}

/** What `status` shows above the table: the chain, pause, sync, and a journal set aside. */
export interface ManagerSummary {
  /** Shown when not the default (`static`). */
  discovery?: string;
  paused: boolean;
  synced: boolean;
  chain: {
    healthy: boolean;
    height: number;
    lastError: string | null;
    lastBlockAt?: string | null;
  };
  journal?: {
    setAside: { to: string; reason: string } | null;
    failure?: { code: string; message: string; since: string } | null;
  };
  /** The manager's inputs (informers, or the files of static discovery), from /readyz. */
  informers?: readonly { name: string; synced: boolean; lastError: string | null }[];
}

/**
 * One line per input of the manager that has a problem now: a broken validators or keys file of
 * static discovery (the last good version stays in force meanwhile), an informer's last error.
 * What `status` and `plan` print under their first line (before, only /readyz and the log said).
 */
export function problemLines(summary: Pick<ManagerSummary, 'informers'>): string[] {
  return (summary.informers ?? [])
    .filter((input) => input.lastError !== null)
    .map((input) => {
      const kept = input.name.endsWith('-file') && input.synced;
      return `problem: ${input.name}: ${input.lastError ?? ''}${kept ? ' (the last good version stays in force)' : ''}`;
    });
}

/** The lines above `status`'s table. */
export function summaryLines(summary: ManagerSummary, now: number): string[] {
  const { chain } = summary;
  const parts: string[] = [];
  if (!chain.healthy && chain.height < 0)
    parts.push(`chain not reachable (${chain.lastError ?? 'no answer yet'})`);
  else {
    const at = chain.lastBlockAt == null ? undefined : Date.parse(chain.lastBlockAt);
    parts.push(
      `chain height ${chain.height}` +
        (at === undefined || Number.isNaN(at) ? '' : `, last block ${ageText(now - at)} ago`) +
        (chain.healthy ? '' : ` (not answering: ${chain.lastError ?? '?'})`),
    );
  }
  parts.push(
    summary.paused
      ? 'PAUSED: no action is taken (cluster-manager resume)'
      : summary.synced
        ? 'manager acting'
        : 'manager not synced yet',
  );
  if (summary.discovery !== undefined && summary.discovery !== 'kubernetes')
    parts.push(`discovery ${summary.discovery}`);
  const lines = [parts.join(' · ')];
  const aside = summary.journal?.setAside;
  if (aside != null)
    lines.push(
      `${/\.corrupt-[^/]*$/.test(aside.to) ? 'damaged journal' : 'journal of another chain'} set aside at start: ${aside.to} (${aside.reason})`,
    );
  const failure = summary.journal?.failure;
  if (failure != null)
    lines.push(
      `JOURNAL CANNOT BE WRITTEN since ${failure.since}: ${failure.code}: ${failure.message}`,
    );
  lines.push(...problemLines(summary));
  return lines;
}
