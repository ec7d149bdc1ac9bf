// Shape checks at the RPC trust boundary: every 200 body the client returns is checked for the
// fields callers rely on, and `null` lists (Go marshals nil slices as null) become empty lists.
// A body that does not fit throws `ShapeError` with the JSON path of the first problem. Each
// checker builds its result from checked fields only (no cast of the parsed body), so a type here
// is a fact about the bytes received; fields V1 sends that no type declares are dropped.
import type {
  Account,
  AddressBook,
  AddressBookActor,
  Block,
  BlockHeader,
  Coin,
  ConsensusState,
  IndexedTransaction,
  Parameter,
  PartialSignature,
  ProtocolActor,
  QuorumCertificate,
  RpcActorType,
  RpcTransaction,
  TransactionsPage,
  ValidatorsPage,
} from './types.ts';

/** A JSON body without the shape the caller relies on; `path` names the first bad field. */
export class ShapeError extends Error {
  readonly path: string;
  constructor(path: string, expected: string) {
    super(`${path === '' ? 'the body' : path} is not ${expected}`);
    this.name = 'ShapeError';
    this.path = path;
  }
}

type Json = Record<string, unknown>;

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ShapeError(path, 'an object');
  }
  return value as Json;
}

function int(value: unknown, path: string): number {
  if (!Number.isSafeInteger(value)) throw new ShapeError(path, 'an integer');
  return value as number;
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new ShapeError(path, 'a string');
  return value;
}

/** A list that Go may send as `null`: an array (each item checked) or null → []. */
function list<T>(value: unknown, path: string, item: (v: unknown, p: string) => T): T[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new ShapeError(path, 'a list or null');
  return value.map((each, i) => item(each, `${path}[${i}]`));
}

const at = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

const ACTOR_TYPES: readonly RpcActorType[] = ['validator', 'servicer', 'fisherman', 'application'];

function actorType(value: unknown, path: string): RpcActorType {
  const found = ACTOR_TYPES.find((type) => type === value);
  if (found === undefined) throw new ShapeError(path, `one of ${ACTOR_TYPES.join(', ')}`);
  return found;
}

/** An object whose every value is a string (a Go `map[string]string`). */
function stringMap(value: unknown, path: string): Record<string, string> {
  const body = object(value, path);
  const out: Record<string, string> = {};
  for (const [key, each] of Object.entries(body)) out[key] = string(each, at(path, key));
  return out;
}

function coin(value: unknown, path: string): Coin {
  const body = object(value, path);
  return {
    amount: string(body.amount, at(path, 'amount')),
    denom: string(body.denom, at(path, 'denom')),
  };
}

/**
 * A committed height. V1 answers its consensus height (a uint64) less one, never below 0
 * (pocket rpc/utils.go:52-60, getQueryHeight), so a negative one is no node's answer.
 */
function blockHeight(value: unknown, path: string): number {
  if (Number.isSafeInteger(value) && (value as number) >= 0) return value as number;
  const shown = value === undefined ? 'missing' : JSON.stringify(value);
  throw new ShapeError(path, `a block height, an integer ≥ 0 (it is ${shown.slice(0, 40)})`);
}

export function heightBody(value: unknown): { height: number } {
  const body = object(value, '');
  return { height: blockHeight(body.height, 'height') };
}

export function consensusState(value: unknown): ConsensusState {
  const body = object(value, '');
  return {
    height: int(body.height, 'height'),
    round: int(body.round, 'round'),
    step: int(body.step, 'step'),
  };
}

export function protocolActor(value: unknown, path = ''): ProtocolActor {
  const body = object(value, path);
  return {
    address: string(body.address, at(path, 'address')),
    actor_type: actorType(body.actor_type, at(path, 'actor_type')),
    public_key: string(body.public_key, at(path, 'public_key')),
    chains:
      body.chains === null ? null : list(body.chains, at(path, 'chains'), (v, p) => string(v, p)),
    service_url: string(body.service_url, at(path, 'service_url')),
    staked_amount: string(body.staked_amount, at(path, 'staked_amount')),
    paused_height: int(body.paused_height, at(path, 'paused_height')),
    unstaking_height: int(body.unstaking_height, at(path, 'unstaking_height')),
    output_addr: string(body.output_addr, at(path, 'output_addr')),
  };
}

export function validatorsPage(value: unknown): ValidatorsPage {
  const body = object(value, '');
  return {
    validators: list(body.validators, 'validators', protocolActor),
    total_validators: int(body.total_validators, 'total_validators'),
    page: int(body.page, 'page'),
    total_pages: int(body.total_pages, 'total_pages'),
  };
}

export function account(value: unknown): Account {
  const body = object(value, '');
  return {
    address: string(body.address, 'address'),
    coins: list(body.coins, 'coins', coin),
  };
}

export function balance(value: unknown): number {
  return int(object(value, '').balance, 'balance');
}

/** The transaction inside an index entry: its hash, place, and message with fee and signature. */
function rpcTransaction(value: unknown, path: string): RpcTransaction {
  const tx = object(value, path);
  const msgPath = at(path, 'txMsg');
  const msg = object(tx.txMsg, msgPath);
  const sigPath = at(msgPath, 'signature');
  const signature = object(msg.signature, sigPath);
  return {
    hash: string(tx.hash, at(path, 'hash')),
    height: int(tx.height, at(path, 'height')),
    index: int(tx.index, at(path, 'index')),
    txMsg: {
      fee: coin(msg.fee, at(msgPath, 'fee')),
      message: object(msg.message, at(msgPath, 'message')),
      nonce: string(msg.nonce, at(msgPath, 'nonce')),
      signature: {
        public_key: string(signature.public_key, at(sigPath, 'public_key')),
        signature: string(signature.signature, at(sigPath, 'signature')),
      },
    },
  };
}

export function indexedTransaction(value: unknown, path = ''): IndexedTransaction {
  const body = object(value, path);
  return {
    height: int(body.height, at(path, 'height')),
    index: int(body.index, at(path, 'index')),
    result_code: int(body.result_code, at(path, 'result_code')),
    signer_addr: string(body.signer_addr, at(path, 'signer_addr')),
    recipient_addr: string(body.recipient_addr, at(path, 'recipient_addr')),
    message_type: string(body.message_type, at(path, 'message_type')),
    tx: rpcTransaction(body.tx, at(path, 'tx')),
  };
}

export function transactionsPage(value: unknown): TransactionsPage {
  const body = object(value, '');
  return {
    transactions: list(body.transactions, 'transactions', indexedTransaction),
    total_txs: int(body.total_txs, 'total_txs'),
    page: int(body.page, 'page'),
    total_pages: int(body.total_pages, 'total_pages'),
  };
}

function partialSignature(value: unknown, path: string): PartialSignature {
  const body = object(value, path);
  return {
    signature: string(body.signature, at(path, 'signature')),
    address: string(body.address, at(path, 'address')),
  };
}

/**
 * A block in either shape: the block itself, as V1's handler writes it
 * (`rpc/handlers_query.go:262`), or wrapped in `{"block": …}` as `rpc/v1/openapi.yaml` says.
 */
export function block(value: unknown): Block {
  const outer = object(value, '');
  const wrapped = !('block_header' in outer) && 'block' in outer;
  const path = wrapped ? 'block' : '';
  const body = wrapped ? object(outer.block, 'block') : outer;
  const headerPath = at(path, 'block_header');
  return {
    block_header: blockHeader(body.block_header, headerPath),
    transactions: list(body.transactions, at(path, 'transactions'), indexedTransaction),
  };
}

function blockHeader(value: unknown, path: string): BlockHeader {
  const header = object(value, path);
  const text = (key: string): string => string(header[key], at(path, key));
  return {
    height: int(header.height, at(path, 'height')),
    network_id: text('network_id'),
    state_hash: text('state_hash'),
    prev_state_hash: text('prev_state_hash'),
    proposer_addr: text('proposer_addr'),
    quorum_cert: quorumCertificate(header.quorum_cert, at(path, 'quorum_cert')),
    timestamp: text('timestamp'),
    state_tree_hashes: stringMap(header.state_tree_hashes, at(path, 'state_tree_hashes')),
    val_set_hash: text('val_set_hash'),
    next_val_set_hash: text('next_val_set_hash'),
  };
}

function quorumCertificate(value: unknown, path: string): QuorumCertificate {
  const qc = object(value, path);
  const sigPath = at(path, 'threshold_sig');
  const thresholdSig = object(qc.threshold_sig, sigPath);
  return {
    height: int(qc.height, at(path, 'height')),
    round: int(qc.round, at(path, 'round')),
    step: string(qc.step, at(path, 'step')),
    block: string(qc.block, at(path, 'block')),
    threshold_sig: {
      signatures: list(thresholdSig.signatures, at(sigPath, 'signatures'), partialSignature),
    },
    transactions: list(qc.transactions, at(path, 'transactions'), (v, p) => string(v, p)),
  };
}

export function parameter(value: unknown, path = ''): Parameter {
  const body = object(value, path);
  return {
    parameter_name: string(body.parameter_name, at(path, 'parameter_name')),
    parameter_value: string(body.parameter_value, at(path, 'parameter_value')),
  };
}

export function parameters(value: unknown): Parameter[] {
  return list(value, '', parameter);
}

function addressBookActor(value: unknown, path: string): AddressBookActor {
  const body = object(value, path);
  return {
    address: string(body.address, at(path, 'address')),
    type: string(body.type, at(path, 'type')),
    public_key: string(body.public_key, at(path, 'public_key')),
    service_url: string(body.service_url, at(path, 'service_url')),
  };
}

export function addressBook(value: unknown): AddressBook {
  const body = object(value, '');
  return {
    actors: list(body.actors, 'actors', addressBookActor),
    height: int(body.height, 'height'),
  };
}
