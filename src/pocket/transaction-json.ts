// JSON views of transactions and messages in V1's RPC style: snake_case names, bytes as hex,
// enums by name. Used by `tx decode`, the localnet node's tx index and tests.
import { ScalarType, type DescMessage } from '@bufbuild/protobuf';
import { bytesToHex } from './bytes.ts';
import { verifyEd25519 } from './crypto.ts';
import { addressHexOf } from './keys.ts';
import { messageSchemas, type PocketMessage } from './messages.ts';
import {
  decodeTransaction,
  decodeTransactionMessage,
  signableBytes,
  transactionHash,
} from './transaction.ts';

export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** V1's RPC names for actor types (`protocolActorToRPCActorTypeEnum`). */
const RPC_ACTOR_TYPES: Record<number, string> = {
  1: 'application',
  2: 'servicer',
  3: 'fisherman',
  4: 'validator',
};

/** The RPC name of an actor type number ("validator" for 4). */
export function rpcActorTypeName(value: number): string {
  return RPC_ACTOR_TYPES[value] ?? 'unspecified';
}

/** A message's fields as V1's RPC shows them (`actor_type: "validator"`, hex bytes). */
export function messageToJson(message: PocketMessage): Record<string, JsonValue> {
  const schema: DescMessage = messageSchemas[message.type];
  const values = message.message as unknown as Record<string, unknown>;
  const out: Record<string, JsonValue> = {};
  for (const field of schema.fields) {
    const value = values[field.localName];
    if (value === undefined) continue; // an unset optional field
    switch (field.fieldKind) {
      case 'scalar':
        out[field.name] =
          field.scalar === ScalarType.BYTES
            ? bytesToHex(value as Uint8Array)
            : (value as JsonValue);
        break;
      case 'enum':
        out[field.name] =
          field.enum.typeName === 'core.ActorType'
            ? rpcActorTypeName(value as number)
            : (field.enum.value[value as number]?.name ?? (value as number));
        break;
      case 'list':
        out[field.name] = [...(value as JsonValue[])];
        break;
      case 'message':
      case 'map':
        break; // not used by the utility messages
    }
  }
  return out;
}

/** What `cluster-manager tx decode` prints. */
export interface DecodedTransactionView {
  type: string;
  message: Record<string, JsonValue>;
  nonce: string;
  signer: string | null;
  publicKey: string | null;
  signature: string | null;
  signatureValid: boolean;
  hash: string;
}

/**
 * Decodes any transaction bytes for display, reporting (not rejecting) a bad signature.
 * Throws `V1Error` 26 or 4 when the bytes or the message cannot be decoded at all.
 */
export function describeTransaction(bytes: Uint8Array): DecodedTransactionView {
  const tx = decodeTransaction(bytes);
  const { msg } = tx;
  const message = decodeTransactionMessage(msg);
  const sig = tx.signature;
  const hasKey = sig !== undefined && sig.publicKey.length === 32;
  return {
    type: message.type,
    message: messageToJson(message),
    nonce: tx.nonce,
    signer: hasKey ? addressHexOf(sig.publicKey) : null,
    publicKey: sig ? bytesToHex(sig.publicKey) : null,
    signature: sig ? bytesToHex(sig.signature) : null,
    signatureValid:
      hasKey &&
      verifyEd25519(sig.signature, signableBytes({ msg, nonce: tx.nonce }), sig.publicKey),
    hash: transactionHash(bytes),
  };
}
