// JSON shapes of the Pocket V1 RPC (rpc/v1/openapi.yaml at 58c9b650), as sent on the wire.

/** `actor_type` in RPC JSON. */
export type RpcActorType = 'validator' | 'servicer' | 'fisherman' | 'application';

/** An actor row (`ProtocolActor`). */
export interface ProtocolActor {
  address: string;
  actor_type: RpcActorType;
  public_key: string;
  chains: string[] | null;
  service_url: string;
  staked_amount: string;
  /** −1 = not paused. */
  paused_height: number;
  /** −1 = staked; > current height = unstaking; ≤ current height = unstaked. */
  unstaking_height: number;
  output_addr: string;
}

/** `POST /v1/query/validators` response. V1 sends `validators: null` for an empty set. */
export interface ValidatorsPage {
  validators: ProtocolActor[] | null;
  total_validators: number;
  page: number;
  total_pages: number;
}

/** `GET /v1/consensus/state`: the live consensus height (committed + 1), round and step. */
export interface ConsensusState {
  height: number;
  round: number;
  step: number;
}

export interface Coin {
  amount: string;
  denom: string;
}

/** `POST /v1/query/account` response. */
export interface Account {
  address: string;
  coins: Coin[];
}

export interface RpcSignature {
  public_key: string;
  signature: string;
}

/** `txMsg` of an indexed transaction: the message in RPC form plus the fee it pays. */
export interface TxMessage {
  fee: Coin;
  message: Record<string, unknown>;
  nonce: string;
  signature: RpcSignature;
}

export interface RpcTransaction {
  hash: string;
  height: number;
  index: number;
  txMsg: TxMessage;
}

/** A transaction as the index (or the mempool) shows it. `result_code` 0 = applied. */
export interface IndexedTransaction {
  height: number;
  index: number;
  result_code: number;
  signer_addr: string;
  recipient_addr: string;
  message_type: string;
  tx: RpcTransaction;
}

/** `POST /v1/query/unconfirmed_txs` response (zero-valued when the mempool is empty). */
export interface TransactionsPage {
  transactions: IndexedTransaction[] | null;
  total_txs: number;
  page: number;
  total_pages: number;
}

export interface PartialSignature {
  signature: string;
  address: string;
}

/** A block's quorum certificate; `threshold_sig.signatures` names the validators that signed. */
export interface QuorumCertificate {
  height: number;
  round: number;
  step: string;
  block: string;
  threshold_sig: { signatures: PartialSignature[] | null };
  transactions: string[] | null;
}

export interface BlockHeader {
  height: number;
  network_id: string;
  state_hash: string;
  prev_state_hash: string;
  proposer_addr: string;
  quorum_cert: QuorumCertificate;
  timestamp: string;
  state_tree_hashes: Record<string, string>;
  val_set_hash: string;
  next_val_set_hash: string;
}

export interface Block {
  block_header: BlockHeader;
  transactions: IndexedTransaction[] | null;
}

/** `POST /v1/query/param` response. */
export interface Parameter {
  parameter_name: string;
  parameter_value: string;
}

/** An entry of `GET /v1/p2p/staked_actors_address_book`. */
export interface AddressBookActor {
  address: string;
  type: string;
  public_key: string;
  service_url: string;
}

export interface AddressBook {
  actors: AddressBookActor[] | null;
  height: number;
}
