// V1's sign bytes checked with Go's protobuf (buf convert): V1 signs `Marshal(Clone(tx))` with the
// signature unset (shared/core/types/transaction.go:109-115), and Go keeps unknown fields through
// decode and marshal. `receivedSignBytes` must give the same bytes, so an appended field changes
// what the signature has to cover.
import { fromBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import {
  parsePrivateKey,
  receivedSignBytes,
  signableBytes,
  signTransaction,
  unstakeMessage,
  packMessage,
} from '../../src/pocket/index.ts';
import { TransactionSchema } from '../../src/pocket/gen/core/transaction_pb.js';
import { bufReencode } from '../support/buf.ts';
import { KEY_005 } from '../support/pocket-vectors.ts';

describe('sign bytes of a received transaction', () => {
  it('keep an unknown field where Go’s marshal keeps it', async () => {
    const key = parsePrivateKey(KEY_005.privateKey);
    const message = unstakeMessage({ address: key.addressBytes, signer: key.addressBytes });
    const tx = signTransaction({ key, message, nonce: '7' });
    const unknown = [0x78, 0x01];
    const altered = fromBinary(TransactionSchema, Uint8Array.from([...tx.bytes, ...unknown]));
    // What Go computes: the transaction without its signature, re-marshalled.
    const unsignedWithField = Uint8Array.from([
      ...signableBytes({ msg: packMessage(message), nonce: '7' }),
      ...unknown,
    ]);
    const go = await bufReencode('core.Transaction', unsignedWithField);
    expect(Buffer.from(receivedSignBytes(altered)).toString('hex')).toBe(
      Buffer.from(go).toString('hex'),
    );
    expect(Buffer.from(go).toString('hex').endsWith('7801')).toBe(true);
  });
});
