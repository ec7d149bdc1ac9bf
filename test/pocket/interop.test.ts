// Both directions against independent implementations: Go protobuf (`buf convert`) and OpenSSL
// Ed25519 (node:crypto).
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  bytesToHex,
  hexToBytes,
  parsePrivateKey,
  signTransaction,
  stakeMessage,
} from '../../src/pocket/index.ts';
import { bufDecode, bufEncode } from '../support/buf.ts';
import { nodeSign } from '../support/node-crypto.ts';
import { nobleSha3Hex } from '../support/noble-digests.ts';
import { KEY_005 } from '../support/pocket-vectors.ts';

const key = parsePrivateKey(KEY_005.privateKey);
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

describe('interoperability', () => {
  it('a transaction built here decodes with Go protobuf to the expected fields', async () => {
    const tx = signTransaction({
      message: stakeMessage({
        publicKey: key.publicKey,
        amount: '15100000000',
        chains: ['0001', '0021'],
        serviceUrl: '127.0.0.1:42069',
        outputAddress: key.addressBytes,
        signer: key.addressBytes,
      }),
      key,
      nonce: '18446744073709551614',
    });
    const json = (await bufDecode('core.Transaction', tx.bytes)) as Record<string, unknown>;
    expect(json).toEqual({
      msg: {
        '@type': 'type.googleapis.com/utility.MessageStake',
        actorType: 'ACTOR_TYPE_VAL',
        publicKey: b64(KEY_005.publicKey),
        chains: ['0001', '0021'],
        amount: '15100000000',
        serviceUrl: '127.0.0.1:42069',
        outputAddress: b64(KEY_005.address),
        signer: b64(KEY_005.address),
      },
      nonce: '18446744073709551614',
      signature: { publicKey: b64(KEY_005.publicKey), signature: expect.any(String) },
    });
    // Go re-encodes it to the very same bytes: our encoding is canonical.
    expect(bytesToHex(await bufEncode('core.Transaction', json))).toBe(tx.hex);
  });

  it('a transaction encoded by Go protobuf and signed by OpenSSL is admitted here', async () => {
    const unsigned = {
      msg: {
        '@type': 'type.googleapis.com/utility.MessageUnstake',
        actorType: 'ACTOR_TYPE_VAL',
        address: b64(KEY_005.address),
        signer: b64(KEY_005.address),
      },
      nonce: '99',
    };
    const signable = await bufEncode('core.Transaction', unsigned);
    const seed = hexToBytes(KEY_005.privateKey.slice(0, 64));
    const signature = nodeSign(seed, signable);
    const bytes = await bufEncode('core.Transaction', {
      ...unsigned,
      signature: {
        publicKey: b64(KEY_005.publicKey),
        signature: Buffer.from(signature).toString('base64'),
      },
    });
    const admitted = admitTransaction(bytes);
    expect(admitted.message.type).toBe('MessageUnstake');
    expect(admitted.signerAddress).toBe(KEY_005.address);
    expect(admitted.nonce).toBe('99');
    expect(admitted.hash).toBe(nobleSha3Hex(bytes));
  });
});
