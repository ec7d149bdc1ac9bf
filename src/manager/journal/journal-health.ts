// Whether the journal can be written now (issue 30, item 9). A full disk made the reconciles fail
// while `status`, `plan` and `/readyz` went on saying "stake" or "ready" as if nothing were
// wrong, and the metric's code was SQLite's `ERR_SQLITE_ERROR`, outside the catalogue. The last
// failed write (a JOURNAL_* error) is kept until a write succeeds again; meanwhile every action
// the plan would take says it waits for the journal, and `/readyz` names the failure.
import { isManagerError, type ErrorCode } from '../errors.ts';
import type { Decision } from '../planner/plan.ts';

export interface JournalFailure {
  readonly code: ErrorCode;
  readonly message: string;
  /** ISO 8601: when the first of the failures in a row happened. */
  readonly since: string;
}

export class JournalHealth {
  #failure: JournalFailure | undefined;

  get failure(): JournalFailure | undefined {
    return this.#failure;
  }

  /** A failure of anything; recorded when it is the journal's. True when it was. */
  failed(error: unknown, now: number): boolean {
    if (!isManagerError(error) || !error.code.startsWith('JOURNAL_')) return false;
    this.#failure = {
      code: error.code as ErrorCode, // JOURNAL_*: the core's own codes, never a chain's
      message: error.message,
      since: this.#failure?.since ?? new Date(now).toISOString(),
    };
    return true;
  }

  /** A write succeeded: the journal works again. */
  wrote(): void {
    this.#failure = undefined;
  }

  /** `decision` as plan and status show it: an action that would go now waits for the journal. */
  overlay(decision: Decision): Decision {
    const failure = this.#failure;
    if (failure === undefined || decision.action === 'none' || decision.waitingFor !== undefined)
      return decision;
    return {
      ...decision,
      reason: `${failure.code}: ${failure.message}; would ${decision.action}: ${decision.reason}`,
    };
  }
}
