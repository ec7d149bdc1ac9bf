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

/** Per-validator progress of a scale: pod ready → staked → active. */
export class ScaleProgress {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #phases = new Map<string, { phase: string; reason: string }>();
  #drawn = 0;

  constructor(out: NodeJS.WriteStream) {
    this.#out = out;
    this.#tty = out.isTTY;
  }

  update(key: string, phase: string, reason: string): void {
    const before = this.#phases.get(key);
    if (before?.phase === phase) return;
    this.#phases.set(key, { phase, reason });
    if (this.#tty) this.#redraw();
    else this.#out.write(`${key}: ${before?.phase ?? '-'} → ${phase} (${reason})\n`);
  }

  note(text: string): void {
    if (this.#tty) {
      this.#clear();
      this.#out.write(`${text}\n`);
      this.#redraw();
    } else {
      this.#out.write(`${text}\n`);
    }
  }

  #clear(): void {
    if (this.#drawn > 0) this.#out.write(`\x1b[${this.#drawn}A\x1b[J`);
    this.#drawn = 0;
  }

  #redraw(): void {
    this.#clear();
    const keys = [...this.#phases.keys()].sort();
    const lines = keys.map((key) => {
      const { phase, reason } = this.#phases.get(key) ?? { phase: '', reason: '' };
      return `${key.padEnd(6)} ${stages(phase)}  ${phase.padEnd(9)} ${reason.slice(0, 80)}`;
    });
    if (lines.length > 0) this.#out.write(`${lines.join('\n')}\n`);
    this.#drawn = lines.length;
  }
}

function stages(phase: string): string {
  const order = ['pending', 'staking', 'staked', 'active'];
  const reached = order.indexOf(phase);
  const mark = (i: number, label: string): string => (reached >= i ? `[${label}]` : ` ${label} `);
  return `${mark(0, 'pod')} ${mark(2, 'staked')} ${mark(3, 'active')}`;
}
