// The port through which the manager sends transactions (Pocket V1's: sign here and broadcast
// over its RPC, or run its CLI). Queries never go through it; they are the port's reads.
import type { ActionKind, ActionRecord, ChainKey, StakeParams } from '../model.ts';

export interface TxRequest {
  readonly kind: ActionKind;
  /** The validator's key as the key store parsed it (the chain's own key type). */
  readonly key: ChainKey;
  /** The amount and the chain's own fields of a stake (`ChainPort.stake`); an unstake ignores them. */
  readonly stake: StakeParams;
  readonly serviceUrl: string;
}

/** What a sender's way of sending can do, as data (the reconciler and the docs read it). */
export interface TransportCapabilities {
  /**
   * Its name in logs, the journal and the status answer: an opaque label the chain chooses
   * (lowercase letters, digits and dashes). The core never branches on it; it branches on the
   * capabilities below.
   */
  readonly name: string;
  /**
   * `prepare` gives the transaction's bytes and hash, and `resend` sends the same bytes again
   * (the same transaction, never a second one): a send that may have failed is followed and
   * re-sent. False: each send signs anew, so a send that may have gone out is only followed.
   */
  readonly resendsSameBytes: boolean;
  /** Error codes of `send` after which the transaction may still have reached the chain. */
  readonly maybeSentCodes: readonly string[];
  /**
   * A retryable failure of `send` (a lost answer, a node that went away) may still have reached
   * the chain: its record stays open and is followed (and re-sent, when `resendsSameBytes`).
   * False: a retryable failure is known not to have sent anything (the record fails; the action
   * is planned again).
   */
  readonly retryableMaySend: boolean;
  /** How `triggerView` makes the next block, in words (for status and docs). */
  readonly viewTrigger: string;
}

/** What is known of a transaction before it is sent (all of it when `resendsSameBytes`). */
export interface PreparedTx {
  readonly txHash?: string | undefined;
  readonly txHex?: string | undefined;
  readonly nonce?: string | undefined;
}

/**
 * How a send ended: admitted to the mempool, already there (35, same bytes), or already
 * committed (95, same bytes). Failures are thrown as `ManagerError`s.
 */
export type SendOutcome = 'admitted' | 'in-mempool' | 'committed';

export interface ChainAdapter {
  /** What this way of sending can do (its name is what the journal records as the action's mode). */
  readonly transport: TransportCapabilities;
  /** Builds what can be built before sending; synchronous so the journal entry precedes any I/O. */
  prepare(request: TxRequest): PreparedTx;
  /** Sends the transaction; resolves once the node admitted it. */
  send(request: TxRequest, prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome>;
  /** Sends the recorded bytes again (idempotent: same hash). `undefined` when this mode cannot. */
  resend(record: ActionRecord, signal: AbortSignal): Promise<SendOutcome> | undefined;
  /** Commits the next block on a chain with a manual pacemaker (a debug action). */
  triggerView(signal: AbortSignal): Promise<void>;
  /**
   * Removes what a manager killed in the middle of an action left behind (e.g. temporary files
   * holding a key), before any new action; answers how many were removed.
   */
  removeLeftovers?(): Promise<number>;
}
