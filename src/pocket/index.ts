// Public surface of the Pocket V1 protocol library (keys, messages, transactions, RPC client).
export * from './bytes.ts';
export * from './errors.ts';
export * from './keys.ts';
export * from './key-generation.ts';
export * from './messages.ts';
export * from './nonce.ts';
export * from './transaction.ts';
export * from './transaction-json.ts';
export * from './v1-errors.ts';
export * from './rpc/types.ts';
export * from './rpc/errors.ts';
export * from './rpc/client.ts';
export type { HttpMethod, HttpRequest, HttpResponse, HttpTransport } from './rpc/transport.ts';
export {
  sha3Digest,
  sha256Digest,
  verifyEd25519,
  verifyEd25519Native,
  randomSeed,
  type Ed25519Verify,
} from './crypto.ts';
