// The pacemaker: when a height starts. Manual (V1 LocalNet's default): only a TriggerView starts
// one. Auto: each height starts a block interval after the previous commit. Round timeouts are
// consensus's own and apply in both modes once a height has started.

export const PacemakerMode = { manual: 'manual', auto: 'auto' } as const;
export type PacemakerMode = (typeof PacemakerMode)[keyof typeof PacemakerMode];

export function isPacemakerMode(value: unknown): value is PacemakerMode {
  return value === PacemakerMode.manual || value === PacemakerMode.auto;
}

export interface PacemakerOptions {
  mode: PacemakerMode;
  intervalMs: number;
  /** Starts height `height` at round 0 (no effect when it already started). */
  startHeight: (height: number) => void;
  /** The height being decided now. */
  currentHeight: () => number;
}

export class Pacemaker {
  readonly #options: PacemakerOptions;
  #mode: PacemakerMode;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PacemakerOptions) {
    this.#options = options;
    this.#mode = options.mode;
  }

  get mode(): PacemakerMode {
    return this.#mode;
  }

  setMode(mode: PacemakerMode): void {
    this.#mode = mode;
    if (mode === PacemakerMode.auto) this.#schedule(this.#options.currentHeight());
    else this.#cancel();
  }

  /** The node is ready to take part (after start or a reset). */
  ready(): void {
    if (this.#mode === PacemakerMode.auto) this.#schedule(this.#options.currentHeight());
  }

  /** Block `height` committed. */
  committed(height: number): void {
    if (this.#mode === PacemakerMode.auto) this.#schedule(height + 1);
  }

  stop(): void {
    this.#cancel();
  }

  #schedule(height: number): void {
    this.#cancel();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#mode === PacemakerMode.auto) this.#options.startHeight(height);
    }, this.#options.intervalMs);
  }

  #cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
