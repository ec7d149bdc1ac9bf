// RPC mode: the manager builds and signs the transaction itself (@noble/ed25519), broadcasts it
// with POST /v1/client/broadcast_tx_sync, and can send the very same bytes again. Views are
// triggered as the chain's capabilities say: the stand-in's debug route, or V1's DebugMessage.
import {
  hasV1Code,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  V1Code,
  type PocketRpcClient,
} from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';
import { ActionKind, type ActionRecord } from '../../model.ts';
import type {
  ChainAdapter,
  PreparedTx,
  SendOutcome,
  TransportCapabilities,
  TxRequest,
} from '../adapter.ts';
import type { PocketViewTrigger } from './capabilities.ts';
import { sendDebugMessage, TRIGGER_NEXT_VIEW } from './debug-message.ts';
import { pocketKey } from './pocket-key.ts';
import { relayChainsOf } from './pocket-stake.ts';
import { broadcastError } from './tx-errors.ts';

export class RpcChainAdapter implements ChainAdapter {
  readonly transport: TransportCapabilities;
  readonly #rpc: PocketRpcClient;
  readonly #viewTrigger: PocketViewTrigger;

  constructor(rpc: PocketRpcClient, options: { viewTrigger?: PocketViewTrigger } = {}) {
    this.#rpc = rpc;
    this.#viewTrigger = options.viewTrigger ?? 'rpc-debug-route';
    this.transport = {
      name: 'rpc',
      // Signed here: the journal keeps the bytes, and the same bytes are the same transaction.
      resendsSameBytes: true,
      maybeSentCodes: [],
      // A broadcast whose answer was lost may have reached the node; its bytes are re-sent.
      retryableMaySend: true,
      viewTrigger:
        this.#viewTrigger === 'p2p-debug-message'
          ? "a DebugMessage to each validator of the address book (V1's p1 Debug TriggerView)"
          : 'POST /v1/debug/trigger_view on the chain RPC',
    };
  }

  prepare(request: TxRequest): PreparedTx {
    const key = pocketKey(request.key);
    const message =
      request.kind === ActionKind.stake
        ? stakeMessage({
            publicKey: key.publicKey,
            amount: request.stake.amount,
            chains: relayChainsOf(request.stake),
            serviceUrl: request.serviceUrl,
            outputAddress: key.addressBytes,
            signer: key.addressBytes,
          })
        : unstakeMessage({ address: key.addressBytes, signer: key.addressBytes });
    const signed = signTransaction({ message, key });
    return { txHash: signed.hash, txHex: signed.hex, nonce: signed.nonce };
  }

  async send(request: TxRequest, prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome> {
    if (prepared.txHex === undefined)
      throw new ManagerError('INTERNAL', 'RPC send without signed bytes');
    return this.#broadcast(prepared.txHex, request.key.address, request.kind, signal);
  }

  resend(record: ActionRecord, signal: AbortSignal): Promise<SendOutcome> | undefined {
    if (record.txHex === undefined) return undefined;
    return this.#broadcast(record.txHex, record.address, record.kind, signal);
  }

  async triggerView(signal: AbortSignal): Promise<void> {
    if (this.#viewTrigger === 'p2p-debug-message')
      await sendDebugMessage(this.#rpc, TRIGGER_NEXT_VIEW, signal);
    else await this.#rpc.debug('trigger_view', { signal });
  }

  async #broadcast(
    hex: string,
    signer: string,
    kind: string,
    signal: AbortSignal,
  ): Promise<SendOutcome> {
    try {
      await this.#rpc.broadcast({ hex, signer }, { signal });
      return 'admitted';
    } catch (error: unknown) {
      if (hasV1Code(error, V1Code.duplicateTransaction)) return 'in-mempool';
      if (hasV1Code(error, V1Code.transactionAlreadyCommitted)) return 'committed';
      throw broadcastError(error, kind);
    }
  }
}
