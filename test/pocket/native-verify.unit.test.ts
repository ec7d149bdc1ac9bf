// The OpenSSL-backed Ed25519 verifier agrees with noble's on valid, tampered and malformed input.
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  generateKeys,
  parsePrivateKey,
  signTransaction,
  unstakeMessage,
  V1Error,
  verifyEd25519,
  verifyEd25519Native,
} from '../../src/pocket/index.ts';
import { KEY_005, KEY_VECTORS } from '../support/pocket-vectors.ts';

const key = parsePrivateKey(KEY_005.privateKey);
const message = new TextEncoder().encode('localnet');
const signature = key.sign(message);

describe('verifyEd25519Native', () => {
  it('accepts what noble signs and noble accepts', () => {
    expect(verifyEd25519Native(signature, message, key.publicKey)).toBe(true);
    expect(verifyEd25519(signature, message, key.publicKey)).toBe(true);
  });

  it('rejects a flipped bit in the message, the signature or the key, as noble does', () => {
    const badMessage = Uint8Array.from(message);
    badMessage[0]! ^= 1;
    const badSignature = Uint8Array.from(signature);
    badSignature[10]! ^= 1;
    const otherKey = parsePrivateKey(KEY_VECTORS[0].privateKey).publicKey;
    for (const [sig, msg, pub] of [
      [signature, badMessage, key.publicKey],
      [badSignature, message, key.publicKey],
      [signature, message, otherKey],
    ] as const) {
      expect(verifyEd25519Native(sig, msg, pub)).toBe(false);
      expect(verifyEd25519(sig, msg, pub)).toBe(false);
    }
  });

  it('returns false for malformed lengths instead of throwing', () => {
    expect(verifyEd25519Native(signature.subarray(1), message, key.publicKey)).toBe(false);
    expect(verifyEd25519Native(signature, message, key.publicKey.subarray(1))).toBe(false);
    expect(verifyEd25519Native(new Uint8Array(64), message, new Uint8Array(32))).toBe(false);
  });

  it('gives the same answers for a cached key and after the cache has turned over', () => {
    for (let i = 0; i < 3; i++) {
      expect(verifyEd25519Native(signature, message, key.publicKey)).toBe(true);
      expect(verifyEd25519Native(signature, Uint8Array.of(1), key.publicKey)).toBe(false);
    }
    for (const other of generateKeys({ count: 40, seed: 'native-verify' }).values()) {
      expect(verifyEd25519Native(other.sign(message), message, other.publicKey)).toBe(true);
      expect(verifyEd25519Native(signature, message, other.publicKey)).toBe(false);
    }
    expect(verifyEd25519Native(signature, message, key.publicKey)).toBe(true);
  });

  it('can stand in for the default verifier in admission', () => {
    const tx = signTransaction({
      message: unstakeMessage({ address: key.addressBytes, signer: key.addressBytes }),
      key,
      nonce: '7',
    });
    expect(admitTransaction(tx.bytes, { verify: verifyEd25519Native }).hash).toBe(tx.hash);
    const tampered = Uint8Array.from(tx.bytes);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => admitTransaction(tampered, { verify: verifyEd25519Native })).toThrow(V1Error);
  });
});
