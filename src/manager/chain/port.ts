// The chain port (docs/design.md §The chain port): everything the manager's core needs
// from a chain, in the core's own words. The planner, reconciler, scaler, journal and control
// plane see only this; a chain is one implementation of it, selected by name (chain/registry.ts;
// Pocket V1's is `chain/pocket/`, over its RPC or its CLI). Nothing here names a message type, a
// fee, a result code, a key format or a way of sending.
import type { ManagerError } from '../errors.ts';
import type {
  ActionKind,
  ChainCapabilities,
  ChainKey,
  ChainValidator,
  IdFormat,
  StakeParams,
} from '../model.ts';
import type { ChainIdentity } from '../journal/journal.ts';
import type { ChainAdapter } from './adapter.ts';

/** Bounds of one chain query. */
export interface ReadOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A transaction found in a committed block. `kind` is undefined for any other message. */
export interface CommittedTx {
  readonly hash: string;
  readonly height: number;
  /** 0 when the chain applied it; anything else is a failure `ChainRules.committedFailure` names. */
  readonly resultCode: number;
  readonly signer: string;
  readonly kind: ActionKind | undefined;
}

/** A transaction waiting in the mempool. */
export interface MempoolTx {
  readonly hash: string;
  readonly signer: string;
  readonly kind: ActionKind | undefined;
}

/** A committed block as the chain view reads it. */
export interface ChainBlock {
  readonly height: number;
  /** The block's identity, and its parent's: a different one at a height seen before is a fork. */
  readonly hash: string;
  readonly parentHash: string;
  /** When the block was made (ms since the epoch), per its header; undefined when unreadable. */
  readonly time: number | undefined;
  /** The addresses whose signatures certify this block. */
  readonly signers: readonly string[];
  readonly txs: readonly CommittedTx[];
  /** The address of the validator that proposed the block, per its header; undefined when unread. */
  readonly proposer?: string | undefined;
}

/**
 * The mempool: listed (`readable`), or not listable right now (V1 answers nothing while anything
 * is pending); then only transactions looked up by hash can be known.
 */
export interface MempoolListing {
  readonly readable: boolean;
  readonly txs: readonly MempoolTx[];
}

/** The queries the manager makes of the chain's RPC. */
export interface ChainReads {
  /** The latest committed height. */
  height(options?: ReadOptions): Promise<number>;
  /** Every validator row at `height`, with its status at that height. */
  validators(height: number, options?: ReadOptions): Promise<ChainValidator[]>;
  /** The committed block at `height` (1 or more: 0 is not a block). */
  block(height: number, options?: ReadOptions): Promise<ChainBlock>;
  mempool(options?: ReadOptions): Promise<MempoolListing>;
  /** Whether one transaction is in the mempool now (and, when known, its kind). */
  mempoolEntry(
    hash: string,
    options?: ReadOptions,
  ): Promise<{ readonly inMempool: boolean; readonly kind: ActionKind | undefined }>;
  /** A committed transaction; undefined when the chain does not know it. */
  transaction(hash: string, options?: ReadOptions): Promise<CommittedTx | undefined>;
  /** The spendable balance of an account, in the chain's smallest unit. */
  balance(address: string, options?: ReadOptions): Promise<bigint>;
  /**
   * The addresses of the validators the genesis set staked (the minimum set's `auto`; on a chain
   * without state sync, the only validators that vote).
   */
  genesisValidators(): Promise<string[]>;
  /** The chain's identity (the journal's binding); undefined before its first block. */
  identity(): Promise<ChainIdentity | undefined>;
}

/** A failure read from a committed transaction. */
export interface CommittedFailure {
  readonly error: ManagerError;
  /** Retrying with the same inputs cannot succeed (the validator is held until they change). */
  readonly terminal: boolean;
}

/** The chain's rules the reconciler applies to its own transactions. */
export interface ChainRules {
  /** The least balance a `kind` needs: the fee, and for a stake the amount staked. */
  requiredBalance(kind: ActionKind, stake: StakeParams): bigint;
  /**
   * What a non-zero result code means for a `kind`: a named error, and whether it is terminal.
   * A failure whose effect is already there (an unstake of a validator already leaving) is not.
   */
  committedFailure(kind: ActionKind, resultCode: number): CommittedFailure;
}

/**
 * What the core asks of a key: parse one from the text the keys source holds for an id. A key
 * that is not one throws an error with a string `code` (e.g. KEY_INVALID) and a message that
 * names what is wrong without quoting the text (it may be most of a key).
 */
export interface KeyCodec<K extends ChainKey = ChainKey> {
  parse(text: string): K;
}

/**
 * Whether a validator's own node is up, for static discovery's readiness (a pod's Ready condition
 * stands in for it on Kubernetes): resolves when the node at `url` answers, throws why not.
 */
export type NodeProbe = (url: string, signal: AbortSignal) => Promise<void>;

/** The chain, as the manager's core uses it. */
export interface ChainPort {
  readonly capabilities: ChainCapabilities;
  readonly reads: ChainReads;
  readonly sender: ChainAdapter;
  readonly rules: ChainRules;
  /** How the chain names validator ids (pods, files and the keys source map to these). */
  readonly ids: IdFormat;
  /** How the chain's private keys are written (the keys Secret's and keys file's values). */
  readonly keys: KeyCodec;
  /** What a stake carries: the configured amount with its denomination, and the chain's fields. */
  readonly stake: StakeParams;
  /** The height a validator's own node has reached (its RPC at `url`). */
  nodeHeight(url: string, signal: AbortSignal): Promise<number>;
  /** Whether a validator's own node at `url` is up (static discovery's readiness). */
  readonly nodeReady: NodeProbe;
  /**
   * The address a validator's node signs with, asked of the node at the service URL it stakes
   * with (undefined: it runs without a key). Absent where the chain's nodes cannot be asked: the
   * manager then reads it from the start times (planner/signers.ts).
   */
  nodeAddress?(serviceUrl: string, signal: AbortSignal): Promise<string | undefined>;
}
