// The vote guard: the last (height, round, step) this validator signed, its lock (with the
// locked block) and the messages it signed in that round, written to disk before a signature
// leaves the process, so a restarted validator never signs twice for one step, never forgets a
// lock, and can re-send what it signed (Tendermint's priv_validator_state plus the part of its
// WAL that matters here). Without a file it lives in memory and a restart loses it (see
// docs/localnet-node.md, "Restarts").
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import type { Vote } from './votes.ts';

export const SignStep = { proposal: 0, prevote: 1, precommit: 2 } as const;
export type SignStep = (typeof SignStep)[keyof typeof SignStep];

export interface Lock {
  round: number;
  hash: string;
  /**
   * The locked block and the prevotes of `round` that justify it, so that a validator restarted
   * while locked can propose it again (Tendermint's WAL keeps them too). Without them, validators
   * locked on a block nobody holds any more (every process stopped mid-round) refuse every other
   * block, and the height never commits.
   */
  block?: unknown;
  polVotes?: Vote[];
}

interface GuardState {
  chain: string;
  height: number;
  round: number;
  step: SignStep;
  lock: Lock | null;
  /**
   * The messages signed in (height, round), as sent. A validator restarted mid-round re-sends
   * them: it may not sign that step again, and a vote that never left the old process would
   * otherwise be missing for good (a round that needs it never reaches its quorum or timeout).
   */
  signed?: unknown[];
}

export interface VoteGuardOptions {
  /** The chain (genesis hash) the guard belongs to; a file of another chain is ignored. */
  chain: string;
  /** Where to persist; in memory only when omitted. */
  file?: string | undefined;
}

export class VoteGuard {
  readonly #chain: string;
  readonly #file: string | undefined;
  #state: GuardState | undefined;

  constructor(options: VoteGuardOptions) {
    this.#chain = options.chain;
    this.#file = options.file;
    this.#state = this.#load();
  }

  /** True when (height, round, step) is strictly after everything signed so far. */
  allows(height: number, round: number, step: SignStep): boolean {
    const last = this.#state;
    if (last === undefined) return true;
    if (height !== last.height) return height > last.height;
    if (round !== last.round) return round > last.round;
    return step > last.step;
  }

  /**
   * Records a signature before it is released (and the lock a non-nil precommit takes), with the
   * signed message itself when given: it is durable before the caller sends it anywhere.
   */
  record(
    height: number,
    round: number,
    step: SignStep,
    taken: { lock?: Lock | undefined; signed?: unknown } = {},
  ): void {
    const { lock, signed } = taken;
    const previous = this.#state;
    const previousLock = previous?.height === height ? previous.lock : null;
    const sameRound = previous?.height === height && previous.round === round;
    this.#state = {
      chain: this.#chain,
      height,
      round,
      step,
      lock: lock ?? previousLock,
      signed: [
        ...(sameRound ? (previous.signed ?? []) : []),
        ...(signed === undefined ? [] : [signed]),
      ],
    };
    this.#persist();
  }

  /**
   * Takes into account a message this validator signed that a peer replayed (its own memory
   * of it may be gone after a restart). Raises the guard and the lock, never lowers them.
   */
  observe(height: number, round: number, step: SignStep, lock?: Lock): void {
    const current = this.#state;
    let next = current === undefined ? undefined : { ...current };
    if (this.allows(height, round, step)) {
      const sameRound = next?.height === height && next.round === round;
      next = {
        chain: this.#chain,
        height,
        round,
        step,
        lock: next?.height === height ? next.lock : null,
        signed: sameRound ? (next?.signed ?? []) : [],
      };
    }
    if (
      lock !== undefined &&
      next?.height === height &&
      (next.lock === null || lock.round > next.lock.round)
    ) {
      next.lock = lock;
    }
    if (next === undefined || JSON.stringify(next) === JSON.stringify(current)) return;
    this.#state = next;
    this.#persist();
  }

  /** The lock held at `height`, if any. */
  lockAt(height: number): Lock | undefined {
    return this.#state?.height === height ? (this.#state.lock ?? undefined) : undefined;
  }

  /** The messages signed in the last round signed at `height` (see GuardState.signed). */
  signedAt(height: number): { round: number; messages: unknown[] } | undefined {
    const state = this.#state;
    if (state?.height !== height) return undefined;
    return { round: state.round, messages: state.signed ?? [] };
  }

  /** The last round signed in at `height`, if any (a restarted validator resumes there). */
  lastRoundAt(height: number): number | undefined {
    return this.#state?.height === height ? this.#state.round : undefined;
  }

  /** Forgets everything (reset to genesis starts a new history). */
  clear(): void {
    this.#state = undefined;
    if (this.#file !== undefined) rmSync(this.#file, { force: true });
  }

  #load(): GuardState | undefined {
    if (this.#file === undefined) return undefined;
    let text: string;
    try {
      text = readFileSync(this.#file, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const state = JSON.parse(text) as GuardState;
      if (state.chain !== this.#chain) return undefined;
      if (!Number.isInteger(state.height) || !Number.isInteger(state.round)) return undefined;
      return state;
    } catch {
      return undefined;
    }
  }

  /** Write-then-rename with fsync: the file is always either the old or the new state. */
  #persist(): void {
    if (this.#file === undefined || this.#state === undefined) return;
    const temp = `${this.#file}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(this.#state));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.#file);
  }
}
