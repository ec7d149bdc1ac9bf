// Shows the validators' status while the devnet runs: redrawn in place on a terminal, one
// block per change otherwise.
import type { ValidatorStatus } from '../manager/status.ts';

export interface StatusBoardOptions {
  url: string;
  /** The control RPC's bearer token (every /v1 read needs it). */
  token?: string | undefined;
  out: NodeJS.WriteStream;
  intervalMs?: number;
}

export class StatusBoard {
  readonly #options: StatusBoardOptions;
  #timer: NodeJS.Timeout | undefined;
  #last = '';
  #drawn = 0;

  constructor(options: StatusBoardOptions) {
    this.#options = options;
  }

  start(): void {
    const tick = async (): Promise<void> => {
      await this.#refresh().catch(() => undefined);
      if (this.#timer !== undefined)
        this.#timer = setTimeout(() => void tick(), this.#options.intervalMs ?? 1_000);
    };
    this.#timer = setTimeout(() => void tick(), 0);
  }

  /** Something else wrote a line below the board: the next draw starts there, in full. */
  lineWritten(): void {
    this.#drawn = 0;
    this.#last = '';
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #refresh(): Promise<void> {
    const response = await fetch(`${this.#options.url}/v1/validators`, {
      headers: { authorization: `Bearer ${this.#options.token ?? ''}` },
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return;
    const { validators } = (await response.json()) as { validators: ValidatorStatus[] };
    const lines = validators.map(
      (v) =>
        `  ${(v.id ?? v.key.slice(0, 8)).padEnd(5)} ${(v.pod ?? '-').padEnd(13)} ${v.phase.padEnd(9)} ${v.reason.slice(0, 90)}`,
    );
    const text = [`validators (${new Date().toISOString().slice(11, 19)}):`, ...lines].join('\n');
    // Redraw on a terminal whenever something changed; elsewhere only when a phase changed.
    const body = this.#options.out.isTTY
      ? lines.join('\n')
      : validators.map((v) => `${v.key}:${v.pod ?? ''}:${v.phase}`).join(' ');
    if (body === this.#last) return;
    this.#last = body;
    const out = this.#options.out;
    if (out.isTTY && this.#drawn > 0) out.write(`\x1b[${this.#drawn}A\x1b[J`);
    out.write(`${text}\n`);
    this.#drawn = out.isTTY ? lines.length + 1 : 0;
  }
}
