// RPC mode: the manager builds and signs the transaction itself (@noble/ed25519), broadcasts it
// with POST /v1/client/broadcast_tx_sync, and can send the very same bytes again.
import {
  hasV1Code,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  V1Code,
  type PocketRpcClient,
} from '../../pocket/index.ts';
import { ManagerError } from '../errors.ts';
import { ActionKind, type ActionRecord } from '../model.ts';
import type { ChainAdapter, PreparedTx, SendOutcome, TxRequest } from './adapter.ts';
import { broadcastError } from './tx-errors.ts';

export class RpcChainAdapter implements ChainAdapter {
  readonly mode = 'rpc' as const;
  readonly #rpc: PocketRpcClient;

  constructor(rpc: PocketRpcClient) {
    this.#rpc = rpc;
  }

  prepare(request: TxRequest): PreparedTx {
    const { key } = request;
    const message =
      request.kind === ActionKind.stake
        ? stakeMessage({
            publicKey: key.publicKey,
            amount: request.amount,
            chains: request.chains,
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
    await this.#rpc.debug('trigger_view', { signal });
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
