// V1 stage-A admission: every stateless rejection with V1's code and text.
import { create, toBinary } from '@bufbuild/protobuf';
import { WireType } from '@bufbuild/protobuf/wire';
import { anyPack } from '@bufbuild/protobuf/wkt';
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  parsePrivateKey,
  signableBytes,
  unstakeMessage,
  V1Error,
  packMessage,
} from '../../src/pocket/index.ts';
import { SignatureSchema, TransactionSchema } from '../../src/pocket/gen/core/transaction_pb.js';
import { MessageSendSchema } from '../../src/pocket/gen/utility/message_pb.js';
import { KEY_005 } from '../support/pocket-vectors.ts';

const key = parsePrivateKey(KEY_005.privateKey);
const msg = packMessage(unstakeMessage({ address: key.addressBytes, signer: key.addressBytes }));

function encode(fields: Parameters<typeof create<typeof TransactionSchema>>[1]): Uint8Array {
  return toBinary(TransactionSchema, create(TransactionSchema, fields));
}

function signed(nonce: string, message = msg): Uint8Array {
  const signature = key.sign(signableBytes({ msg: message, nonce }));
  return encode({
    msg: message,
    nonce,
    signature: create(SignatureSchema, { publicKey: key.publicKey, signature }),
  });
}

function rejection(bytes: Uint8Array): V1Error {
  try {
    admitTransaction(bytes);
  } catch (error) {
    if (error instanceof V1Error) return error;
    throw error;
  }
  throw new Error('expected a V1Error');
}

describe('admitTransaction (V1 stage A)', () => {
  it('admits a well-formed signed transaction', () => {
    expect(admitTransaction(signed('1')).signerAddress).toBe(KEY_005.address);
  });

  it('rejects bytes that are not protobuf with 26', () => {
    const error = rejection(Uint8Array.from([0x0a, 0xff, 0xff]));
    expect(error.code).toBe(26);
    expect(error.text).toMatch(
      /^CODE: 26, ERROR: an error occurred unmarshalling the structure in protobuf: /,
    );
  });

  it('rejects an empty nonce with 30', () => {
    expect(rejection(encode({ msg })).text).toBe(
      'CODE: 30, ERROR: the nonce in the transaction is empty',
    );
  });

  it('rejects a missing signature structure with 136', () => {
    expect(rejection(encode({ msg, nonce: '1' })).text).toBe(
      'CODE: 136, ERROR: the signature structure is empty',
    );
  });

  it('rejects an empty signature with 32', () => {
    const bytes = encode({
      msg,
      nonce: '1',
      signature: create(SignatureSchema, { publicKey: key.publicKey }),
    });
    expect(rejection(bytes).text).toBe('CODE: 32, ERROR: the signature field is empty');
  });

  it('rejects an empty public key with 31', () => {
    const bytes = encode({
      msg,
      nonce: '1',
      signature: create(SignatureSchema, { signature: new Uint8Array(64) }),
    });
    expect(rejection(bytes).text).toBe('CODE: 31, ERROR: the public key field is empty');
  });

  it('rejects a public key that is not 32 bytes with 8', () => {
    const bytes = encode({
      msg,
      nonce: '1',
      signature: create(SignatureSchema, {
        publicKey: new Uint8Array(31),
        signature: new Uint8Array(64),
      }),
    });
    expect(rejection(bytes).text).toMatch(
      /^CODE: 8, ERROR: unable to convert the raw bytes to a valid public key: /,
    );
  });

  it('rejects an unknown or undecodable message with 4', () => {
    const unknown = { ...msg, typeUrl: 'type.googleapis.com/utility.MessageBogus' };
    expect(rejection(signed('1', unknown)).text).toMatch(
      /^CODE: 4, ERROR: unable to decode the message: /,
    );
    const garbage = { ...msg, value: Uint8Array.from([0xff]) };
    expect(rejection(signed('1', garbage)).code).toBe(4);
    const send = anyPack(MessageSendSchema, create(MessageSendSchema, { amount: '1' }));
    expect(admitTransaction(signed('1', send)).message.type).toBe('MessageSend');
  });

  it('rejects a signature over other bytes with 10', () => {
    const signature = key.sign(signableBytes({ msg, nonce: '2' }));
    const bytes = encode({
      msg,
      nonce: '1',
      signature: create(SignatureSchema, { publicKey: key.publicKey, signature }),
    });
    expect(rejection(bytes).text).toBe(
      'CODE: 10, ERROR: the public key / signature combination is not valid for the msg',
    );
  });
});

describe('admitTransaction: the bytes as signed (V1 shared/core/types/transaction.go:109-115)', () => {
  const unknownField = Uint8Array.from([0x78, 0x01]); // field 15, varint 1

  it('counts an appended unknown field in the sign bytes, so the signature fails with 10', () => {
    const original = signed('42');
    expect(admitTransaction(original).signerAddress).toBe(KEY_005.address);
    const altered = Uint8Array.from([...original, ...unknownField]);
    expect(rejection(altered).text).toBe(
      'CODE: 10, ERROR: the public key / signature combination is not valid for the msg',
    );
  });

  it('admits a transaction signed with the unknown field in it, as V1 does', () => {
    const unsigned = Uint8Array.from([...encode({ msg, nonce: '43' }), ...unknownField]);
    const signature = key.sign(unsigned);
    const bytes = Uint8Array.from([
      ...unsigned,
      ...toBinary(
        TransactionSchema,
        create(TransactionSchema, {
          signature: create(SignatureSchema, { publicKey: key.publicKey, signature }),
        }),
      ),
    ]);
    expect(admitTransaction(bytes).nonce).toBe('43');
    // The canonical rule refuses unknown fields outright.
    expect(() => admitTransaction(bytes, { canonical: true })).toThrow(/CODE: 26, .*canonical/);
  });

  it('with `canonical`, refuses re-encodings that keep a valid signature under a new hash', () => {
    const original = admitTransaction(signed('44'));
    const sig = original.tx.signature!;
    // Fields out of order: nonce (3) and signature (2) before msg (1). Decodes to the same tx.
    const reordered = Uint8Array.from([
      ...encode({ nonce: '44' }),
      ...encode({ signature: sig }),
      ...encode({ msg }),
    ]);
    // An unknown field inside the signature struct, which the sign bytes leave out.
    const padded = encode({
      msg,
      nonce: '44',
      signature: create(SignatureSchema, {
        ...sig,
        $unknown: [{ no: 15, wireType: WireType.Varint, data: Uint8Array.from([1]) }],
      }),
    });
    for (const bytes of [reordered, padded]) {
      // V1's rule lets both through: a replay of the same transaction under another hash.
      const replay = admitTransaction(bytes);
      expect(replay.hash).not.toBe(original.hash);
      expect(() => admitTransaction(bytes, { canonical: true })).toThrow(
        /CODE: 26, .*not in canonical form/,
      );
    }
    expect(admitTransaction(signed('44'), { canonical: true }).hash).toBe(original.hash);
  });
});
