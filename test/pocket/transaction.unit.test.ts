import { create, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  bytesToHex,
  decodeTransaction,
  describeTransaction,
  hexToBytes,
  parsePrivateKey,
  randomNonce,
  signableBytes,
  signTransaction,
  stakeMessage,
  unstakeMessage,
} from '../../src/pocket/index.ts';
import { TransactionSchema } from '../../src/pocket/gen/core/transaction_pb.js';
import { nodeVerify } from '../support/node-crypto.ts';
import { nobleSha3Hex } from '../support/noble-digests.ts';
import { KEY_005, STAKE_VECTOR, UNSTAKE_VECTOR } from '../support/pocket-vectors.ts';

const key = parsePrivateKey(KEY_005.privateKey);

function stakeOf005() {
  return stakeMessage({
    publicKey: key.publicKey,
    amount: STAKE_VECTOR.amount,
    chains: STAKE_VECTOR.chains,
    serviceUrl: STAKE_VECTOR.serviceUrl,
    outputAddress: key.addressBytes,
    signer: key.addressBytes,
  });
}

describe('signTransaction', () => {
  it('reproduces the stake vector: signable bytes, signature and hash', () => {
    const tx = signTransaction({ message: stakeOf005(), key, nonce: STAKE_VECTOR.nonce });
    const decoded = decodeTransaction(tx.bytes);
    expect(bytesToHex(signableBytes({ msg: decoded.msg, nonce: decoded.nonce }))).toBe(
      STAKE_VECTOR.signable,
    );
    expect(bytesToHex(decoded.signature?.signature ?? new Uint8Array())).toBe(
      STAKE_VECTOR.signature,
    );
    expect(tx.hex).toBe(
      `${STAKE_VECTOR.signable}1a640a20${KEY_005.publicKey}1240${STAKE_VECTOR.signature}`,
    );
    expect(tx.hash).toBe(STAKE_VECTOR.hash);
    expect(tx.signer).toBe(KEY_005.address);
  });

  it('reproduces the unstake vector', () => {
    const message = unstakeMessage({ address: key.addressBytes, signer: key.addressBytes });
    const tx = signTransaction({ message, key, nonce: UNSTAKE_VECTOR.nonce });
    expect(tx.hex.startsWith(UNSTAKE_VECTOR.signable)).toBe(true);
    expect(tx.hash).toBe(UNSTAKE_VECTOR.hash);
  });

  it('signs so that node:crypto verifies the signature and agrees on the SHA3 hash', () => {
    const tx = signTransaction({ message: stakeOf005(), key });
    const decoded = decodeTransaction(tx.bytes);
    const signature = decoded.signature?.signature ?? new Uint8Array();
    expect(
      nodeVerify(
        key.publicKey,
        signableBytes({ msg: decoded.msg, nonce: decoded.nonce }),
        signature,
      ),
    ).toBe(true);
    expect(nobleSha3Hex(tx.bytes)).toBe(tx.hash);
  });

  it('encodes canonically: decoding and re-encoding gives the same bytes', () => {
    const tx = signTransaction({ message: stakeOf005(), key });
    expect(bytesToHex(toBinary(TransactionSchema, decodeTransaction(tx.bytes)))).toBe(tx.hex);
  });

  it('uses a fresh decimal uint64 nonce by default', () => {
    const nonces = new Set(
      Array.from({ length: 50 }, () => signTransaction({ message: stakeOf005(), key }).nonce),
    );
    expect(nonces.size).toBe(50);
    for (const nonce of nonces) expect(nonce).toMatch(/^[1-9]\d{0,19}$/);
    expect(BigInt(randomNonce())).toBeLessThan(2n ** 64n - 1n);
  });

  it('draws distinct nonces across refills of the random pool (256 per refill)', () => {
    const nonces = Array.from({ length: 600 }, () => randomNonce());
    expect(new Set(nonces).size).toBe(600);
    for (const nonce of nonces) {
      expect(nonce).toMatch(/^[1-9]\d{0,19}$/);
      expect(BigInt(nonce)).toBeLessThan(2n ** 64n - 1n);
    }
    // Uniform 64-bit values: the top bit is set in about half (600 draws; 5 sigma is ±61).
    const high = nonces.filter((nonce) => BigInt(nonce) >= 2n ** 63n).length;
    expect(high).toBeGreaterThan(239);
    expect(high).toBeLessThan(361);
  });
});

describe('describeTransaction', () => {
  it('shows the message with hex addresses, the signer, and a valid signature', () => {
    const tx = signTransaction({ message: stakeOf005(), key, nonce: STAKE_VECTOR.nonce });
    expect(describeTransaction(tx.bytes)).toEqual({
      type: 'MessageStake',
      message: {
        actor_type: 'validator',
        public_key: KEY_005.publicKey,
        chains: ['0001'],
        amount: STAKE_VECTOR.amount,
        service_url: STAKE_VECTOR.serviceUrl,
        output_address: KEY_005.address,
        signer: KEY_005.address,
      },
      nonce: STAKE_VECTOR.nonce,
      signer: KEY_005.address,
      publicKey: KEY_005.publicKey,
      signature: STAKE_VECTOR.signature,
      signatureValid: true,
      hash: STAKE_VECTOR.hash,
    });
  });

  it('reports a tampered signature as invalid instead of failing', () => {
    const tx = signTransaction({ message: stakeOf005(), key });
    const decoded = decodeTransaction(tx.bytes);
    decoded.nonce = '7';
    const tampered = toBinary(TransactionSchema, create(TransactionSchema, decoded));
    expect(describeTransaction(tampered).signatureValid).toBe(false);
    expect(() => admitTransaction(tampered)).toThrow(/CODE: 10,/);
  });

  it('decodes the unstake vector given as raw hex', () => {
    const raw = hexToBytes(
      `${UNSTAKE_VECTOR.signable}1a640a20${KEY_005.publicKey}1240${UNSTAKE_VECTOR.signature}`,
    );
    const view = describeTransaction(raw);
    expect(view.type).toBe('MessageUnstake');
    expect(view.message).toEqual({
      actor_type: 'validator',
      address: KEY_005.address,
      signer: KEY_005.address,
    });
    expect(view.signatureValid).toBe(true);
    expect(view.hash).toBe(UNSTAKE_VECTOR.hash);
  });
});
