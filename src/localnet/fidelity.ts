// The node's fidelity profile: `intended` does what V1 is meant to do, `v1` does what V1's Go
// code does (pokt-network/pocket at 58c9b650). One object, consulted at the few points where the
// two differ; the rule table with V1's sources is in docs/localnet-node.md ("Fidelity profiles").
import type { Genesis } from './genesis.ts';

export const Fidelity = { intended: 'intended', v1: 'v1' } as const;
export type Fidelity = (typeof Fidelity)[keyof typeof Fidelity];

export function isFidelity(value: unknown): value is Fidelity {
  return value === Fidelity.intended || value === Fidelity.v1;
}

/** The parts of a validator row the set rule reads. */
export interface ValidatorRow {
  unstakingHeight: number;
  pausedHeight: number;
}

/** V1's `consensus.max_mempool_bytes`, the budget its leader reaps per block (values.yaml:77). */
const V1_BLOCK_TX_BYTES = 500_000_000;

export interface FidelityProfile {
  readonly name: Fidelity;
  /**
   * Whether a validator row belongs to the set that signs a height (quorum, leader, peers).
   * intended: staked, not unstaking, not paused. v1: every row ever staked
   * (`persistence/types/actor_shared_sql.go:87-94` has no status filter).
   */
  inValidatorSet(row: ValidatorRow): boolean;
  /**
   * A stake for an address that has a row which is unstaking or unstaked. intended: re-activate
   * it. v1: 60, the row exists (`utility/unit_of_work/tx_message_handler.go:92-96`).
   */
  readonly restakeKnown: 'reactivate' | 'reject';
  /**
   * Whether a node holding `address` (undefined: a full node) syncs blocks and takes part in
   * consensus. v1: only genesis validators (no state sync, `consensus/state_sync/module.go:47-55`;
   * the id map is built from genesis, `consensus/module.go:158-169`).
   */
  follows(address: string | undefined, genesis: Genesis): boolean;
  /** The transaction bytes a proposer may put in one block. */
  blockTxBytes(genesis: Genesis): number;
  /**
   * The largest transaction admitted to the mempool, or undefined for no check (V1 has none:
   * `utility/transaction.go:14-43`).
   */
  maxTxBytes(genesis: Genesis): number | undefined;
  /** Round mechanics where the stand-in's rounds follow V1's pacemaker. */
  readonly rounds: {
    /**
     * A node jumps to a higher round of its height on one member's message, not f + 1 (V1's
     * pacemaker catch-up, `consensus/pacemaker/module.go:146-167`). Needed where each validator
     * applies its own TriggerView (`consensus/debugging.go:60-74`): one can be a round ahead.
     */
    readonly catchUpOnAnyMessage: boolean;
    /**
     * Step timeouts grow with the round (min(1 + r/2, 4) × base). V1's is one fixed
     * `timeout_msec` (`consensus/pacemaker/module.go:289-292`, "TODO: exponential backoff").
     */
    readonly timeoutGrows: boolean;
    /**
     * The proposer of a round never counts its own vote nor its NewRound, and waits for NewRound
     * from more than 2/3 of the set besides itself (V1: RainTree drops a send to self,
     * `p2p/raintree/router.go:172-179`; ConsensusOptions.leaderExcluded).
     */
    readonly leaderExcluded: boolean;
    /**
     * On the manual pacemaker, a height waiting for its trigger bumps its round every step
     * timeout and a trigger starts the round after it (`consensus/pacemaker/module.go:172-261`,
     * `consensus/debugging.go:60-74`).
     */
    readonly idleRounds: boolean;
    /**
     * The auto pacemaker waits `--block-interval-ms` after a commit. V1's starts the next height
     * at once (`NewHeight` → `startNextView`, `consensus/pacemaker/module.go:226-287`;
     * `debug_time_between_steps_msec` is read and never used, `pacemaker/debug.go:16-20`).
     */
    readonly blockInterval: boolean;
  };
  readonly rpc: {
    /**
     * `/v1/consensus/state` says height 0 until the first height starts (V1's consensus height,
     * `consensus/module.go:116`, set from the block store only once it holds a block, 298-302).
     */
    readonly heightZeroAtGenesis: boolean;
    /**
     * `/v1/query/unconfirmed_tx` matches the hash as given: V1's mempool is keyed by the
     * lowercase hex hash (`rpc/handlers_query.go:557-561`, `utility/types/tx_fifo_mempool.go:98-99`).
     */
    readonly hashCaseSensitive: boolean;
    /**
     * POST bodies bind as Echo v4.9.1's `DefaultBinder` does (`bind.go:59-97`): a form binds no
     * field (V1's structs have no `form` tags) and gives zero values, the JSON check is a
     * case-sensitive prefix. Otherwise only `application/json` binds.
     */
    readonly echoFormBinding: boolean;
    /** A request body over 16 MiB is refused with 413 (V1's Echo has no BodyLimit: `rpc/server.go:36-62`). */
    readonly bodyLimit: boolean;
    /** A GET route also answers HEAD (Echo v4.9.1 answers 405: its router matches methods exactly). */
    readonly headAsGet: boolean;
    /** `/v1/query/block` answers `{"block": …}` (openapi) rather than the block itself. */
    readonly wrapBlock: boolean;
    /** The mempool queries answer 500 `CODE: 135` while the mempool holds anything. */
    readonly mempoolUnreadableWhenBusy: boolean;
    /** `/v1/debug/*` routes exist (V1 sends debug messages over P2P only). */
    readonly debugRoutes: boolean;
    /**
     * The address book as V1's handler runs it: every row, V1's answers to a bad `height` or a
     * missing `actor_type`. Otherwise the active set, and 400 `bad request`.
     */
    readonly addressBookEveryRow: boolean;
    /** JSON object keys in Go's order (sorted), byte for byte as V1 writes them. */
    readonly goKeyOrder: boolean;
  };
}

const INTENDED: FidelityProfile = {
  name: Fidelity.intended,
  inValidatorSet: (row) => row.unstakingHeight === -1 && row.pausedHeight === -1,
  restakeKnown: 'reactivate',
  follows: () => true,
  blockTxBytes: (genesis) => genesis.max_block_bytes,
  maxTxBytes: (genesis) => genesis.max_block_bytes,
  rounds: {
    catchUpOnAnyMessage: false,
    timeoutGrows: true,
    leaderExcluded: false,
    idleRounds: false,
    blockInterval: true,
  },
  rpc: {
    heightZeroAtGenesis: false,
    hashCaseSensitive: false,
    echoFormBinding: false,
    bodyLimit: true,
    headAsGet: true,
    wrapBlock: true,
    mempoolUnreadableWhenBusy: false,
    debugRoutes: true,
    addressBookEveryRow: false,
    goKeyOrder: false,
  },
};

const V1: FidelityProfile = {
  name: Fidelity.v1,
  inValidatorSet: () => true,
  restakeKnown: 'reject',
  follows: (address, genesis) =>
    address !== undefined && genesis.validators.some((v) => v.address === address),
  blockTxBytes: () => V1_BLOCK_TX_BYTES,
  maxTxBytes: () => undefined,
  rounds: {
    catchUpOnAnyMessage: true,
    timeoutGrows: false,
    leaderExcluded: true,
    idleRounds: true,
    blockInterval: false,
  },
  rpc: {
    heightZeroAtGenesis: true,
    hashCaseSensitive: true,
    echoFormBinding: true,
    bodyLimit: false,
    headAsGet: false,
    wrapBlock: false,
    mempoolUnreadableWhenBusy: true,
    debugRoutes: false,
    addressBookEveryRow: true,
    goKeyOrder: true,
  },
};

export function fidelityProfile(name: Fidelity = Fidelity.intended): FidelityProfile {
  return name === Fidelity.v1 ? V1 : INTENDED;
}

/** The default profile: V1's intent. */
export const INTENDED_PROFILE = INTENDED;
