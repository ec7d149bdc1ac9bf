// The port through which the manager sends transactions: RPC (sign here, broadcast) or the
// node's CLI (p1 syntax). Queries never go through it; they use the RPC client.
import type { ActionKind, ActionRecord, ChainKey } from '../model.ts';

export interface TxRequest {
  readonly kind: ActionKind;
  /** The validator's key as the key store parsed it (the chain's own key type). */
  readonly key: ChainKey;
  readonly amount: string;
  readonly chains: readonly string[];
  readonly serviceUrl: string;
}

/** What is known of a transaction before it is sent (RPC: everything; CLI: nothing). */
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
  readonly mode: 'rpc' | 'cli';
  /** Builds what can be built before sending; synchronous so the journal entry precedes any I/O. */
  prepare(request: TxRequest): PreparedTx;
  /** Sends the transaction; resolves once the node admitted it. */
  send(request: TxRequest, prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome>;
  /** Sends the recorded bytes again (idempotent: same hash). `undefined` when this mode cannot. */
  resend(record: ActionRecord, signal: AbortSignal): Promise<SendOutcome> | undefined;
  /** Commits the next block on a chain with a manual pacemaker (a debug action). */
  triggerView(signal: AbortSignal): Promise<void>;
  /**
   * Removes what a manager killed in the middle of an action left behind (CLI mode: keybases
   * holding a key), before any new action; answers how many were removed.
   */
  removeLeftovers?(): Promise<number>;
}
