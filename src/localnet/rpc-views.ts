// The V1 RPC's JSON shapes (rpc/v1/openapi.yaml) of actors, transactions and blocks.
import {
  bytesToHex,
  messageToJson,
  rpcActorTypeName,
  type AdmittedTransaction,
  type IndexedTransaction,
  type ProtocolActor,
  type QuorumCertificate,
  type RpcActorType,
  type TxMessage,
  type Block as RpcBlock,
} from '../pocket/index.ts';
import type { CommittedBlock } from './block.ts';
import type { Chain } from './chain.ts';
import { goTimeString } from './go-format.ts';
import { feeParam } from './stage-b.ts';
import type { Actor } from './state.ts';
import { isActorKind } from './actor-types.ts';

const DENOM = 'upokt';

/** V1 names the commit certificate's step with its HotStuff enum; ours is the precommit quorum. */
const QC_STEP = 'HOTSTUFF_STEP_COMMIT';

export function protocolActor(actor: Actor): ProtocolActor {
  return {
    address: actor.address,
    actor_type: rpcActorTypeName(actor.actorType) as RpcActorType,
    public_key: actor.publicKey,
    chains: actor.chains,
    service_url: actor.serviceUrl,
    staked_amount: actor.stakedAmount.toString(),
    paused_height: actor.pausedHeight,
    unstaking_height: actor.unstakingHeight,
    output_addr: actor.output,
  };
}

/** `txMsg`: the message as V1's `txBytesToRPCTxMsg` renders it, with its fee. */
function txMessage(tx: AdmittedTransaction, chain: Chain): TxMessage {
  const { message } = tx;
  const json = messageToJson(message);
  let rendered: Record<string, unknown>;
  switch (message.type) {
    case 'MessageSend':
      rendered = {
        from_addr: json.from_address,
        to_addr: json.to_address,
        amount: json.amount,
        denom: DENOM,
      };
      break;
    case 'MessageStake':
    case 'MessageEditStake':
      rendered = {
        ...json,
        chains: message.message.chains.length === 0 ? null : json.chains,
        signer: json.signer ?? '',
        denom: DENOM,
      };
      break;
    case 'MessageUnstake':
    case 'MessageUnpause':
      rendered = { ...json, signer: json.signer ?? '' };
      break;
  }
  const kind = message.type === 'MessageSend' ? undefined : (message.message.actorType as number);
  const fee = chain.state
    .at()
    .param(feeParam(message.type, kind !== undefined && isActorKind(kind) ? kind : 4));
  const signature = tx.tx.signature;
  return {
    fee: { amount: fee ?? '0', denom: DENOM },
    message: rendered,
    nonce: tx.nonce,
    signature: {
      public_key: bytesToHex(signature?.publicKey ?? new Uint8Array()),
      signature: bytesToHex(signature?.signature ?? new Uint8Array()),
    },
  };
}

export interface TxPosition {
  height: number;
  index: number;
  code: number;
}

/** An `IndexedTransaction`: committed (its block position and result) or pending (zeros). */
export function indexedTransaction(
  tx: AdmittedTransaction,
  position: TxPosition,
  chain: Chain,
): IndexedTransaction {
  return {
    height: position.height,
    index: position.index,
    result_code: position.code,
    signer_addr: tx.signerAddress,
    recipient_addr:
      tx.message.type === 'MessageSend' ? bytesToHex(tx.message.message.toAddress) : '',
    message_type: tx.message.type,
    tx: {
      hash: tx.hash,
      height: position.height,
      index: position.index,
      txMsg: txMessage(tx, chain),
    },
  };
}

/** A committed block as `POST /v1/query/block` returns it (inside `{"block": …}`). */
export function blockView(committed: CommittedBlock, chain: Chain): RpcBlock {
  const { block, qc } = committed;
  const { header } = block;
  const quorumCert: QuorumCertificate = {
    height: qc.height,
    round: qc.round,
    step: QC_STEP,
    block: committed.hash,
    threshold_sig: {
      signatures: qc.signatures.map((s) => ({ signature: s.signature, address: s.address })),
    },
    transactions: block.txs.map((raw) => Buffer.from(raw, 'hex').toString('base64')),
  };
  return {
    block_header: {
      height: header.height,
      network_id: header.chainId,
      state_hash: header.stateHash,
      prev_state_hash: header.prevStateHash,
      proposer_addr: header.proposer,
      quorum_cert: quorumCert,
      timestamp: goTimeString(header.time),
      state_tree_hashes: {},
      val_set_hash: header.valSetHash,
      next_val_set_hash: header.nextValSetHash,
    },
    transactions: chain
      .transactionsOf(header.height)
      .map((record) =>
        indexedTransaction(
          record.tx,
          { height: record.height, index: record.index, code: record.code },
          chain,
        ),
      ),
  };
}
