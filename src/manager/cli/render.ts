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

/** Where one validator stands in a scale, as the progress display names it. */
export function stageOf(v: ValidatorStatus): string {
  if (v.wanted) {
    if (v.phase === 'active') return 'active';
    if (v.phase === 'failed' || v.phase === 'held') return v.phase;
    if (v.chain.status === 'staked') return 'staked';
    if (v.phase === 'staking') return 'staking';
    return v.ready ? 'pod ready' : 'waiting for pod';
  }
  if (v.chain.status === 'staked') return v.phase === 'unstaking' ? 'unstaking' : 'draining';
  return v.chain.status === 'unstaking' || v.chain.status === 'unstaked' ? 'left the set' : 'gone';
}

const check = (done: boolean): string => (done ? '[x]' : '[ ]');

/**
 * Live progress of a scale, per validator: pod ready → staked → active (or, leaving: draining →
 * unstaking → left the set). Redrawn in place on a terminal; elsewhere one plain line per change.
 */
export class ScaleProgress {
  readonly #out: NodeJS.WritableStream & { isTTY?: boolean };
  readonly #tty: boolean;
  readonly #stages = new Map<string, string>();
  /** Whether a snapshot has been shown: the first one is the state before the scale. */
  #shown = false;
  #rows: string[] = [];
  #drawn = 0;

  constructor(out: NodeJS.WritableStream & { isTTY?: boolean }) {
    this.#out = out;
    this.#tty = out.isTTY === true;
  }

  /** Shows a fresh snapshot of GET /v1/validators. */
  show(validators: readonly ValidatorStatus[]): void {
    const shown = validators.filter(
      (v) => v.id !== null && (v.wanted || v.pod !== null || v.chain.status === 'staked'),
    );
    const lines: string[] = [];
    for (const v of shown) {
      const id = v.id ?? v.key;
      const stage = stageOf(v);
      const before = this.#stages.get(id);
      this.#stages.set(id, stage);
      if (this.#tty) {
        const steps = v.wanted
          ? `${check(v.ready || v.chain.status === 'staked')} pod ready  ${check(v.chain.status === 'staked')} staked  ${check(v.phase === 'active')} active`
          : `leaving: ${stage}`;
        lines.push(
          `${id}  ${(v.pod ?? '-').padEnd(13)} ${steps.padEnd(42)} ${v.reason.slice(0, 70)}`,
        );
      } else if (before !== stage) {
        // Off a terminal, the first snapshot only reports who is not settled yet. A validator
        // that first shows up in a later one is reported whatever its stage: a slow machine may
        // see a joiner only once it is already active.
        if (this.#shown || (stage !== 'active' && stage !== 'left the set' && stage !== 'gone'))
          this.#out.write(
            `${id}: ${before === undefined ? '' : `${before} → `}${stage} (${v.reason})\n`,
          );
      }
    }
    this.#shown = true;
    if (this.#tty) {
      this.#rows = lines;
      this.#redraw();
    }
  }

  note(text: string): void {
    if (this.#tty) this.#clear();
    this.#out.write(`${text}\n`);
    if (this.#tty) this.#redraw();
  }

  /** Writes the last line under the table, which stays on the screen. */
  finish(text: string): void {
    this.#out.write(`${text}\n`);
    this.#drawn = 0;
  }

  #clear(): void {
    if (this.#drawn > 0) this.#out.write(`\x1b[${this.#drawn}A\x1b[J`);
    this.#drawn = 0;
  }

  #redraw(): void {
    this.#clear();
    if (this.#rows.length > 0) this.#out.write(`${this.#rows.join('\n')}\n`);
    this.#drawn = this.#rows.length;
  }
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
  return lines;
}
