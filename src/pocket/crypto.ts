// The primitives Pocket V1 uses: Ed25519 (pure, RFC 8032), SHA-256 for addresses, SHA3-256 for
// transaction hashes. Signing and the fast verifier on the platform's OpenSSL; hashes, the
// pure-JS verifier and key generation from the audited noble implementations.
import {
  createPrivateKey,
  createPublicKey,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { sha3_256 } from '@noble/hashes/sha3.js';

ed.hashes.sha512 = sha512;

/** Ed25519 public key (32 bytes) of a 32-byte seed. */
export function publicKeyOfSeed(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

/** Pure Ed25519 signature (64 bytes) of `message` under a 32-byte seed. */
export function signEd25519(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/** A seed's Ed25519 signer: its public key, and signing without deriving that key again. */
export interface Ed25519Signer {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

/** DER PKCS#8 header of an Ed25519 private key (RFC 8410): the 32-byte seed follows. */
const PKCS8_ED25519_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/**
 * A seed's signer on the platform's OpenSSL (node:crypto): pure Ed25519 (RFC 8032), so its
 * signatures are byte for byte noble's `ed.sign` and Go's crypto/ed25519 (deterministic; the unit
 * tests compare all three). Deriving the public key with noble cost about 0.1 CPU s in a fresh
 * process (it builds its base-point tables on first use), paid by every node, manager and CLI
 * start that parses a key; OpenSSL takes microseconds. The secret lives only in a KeyObject held
 * by this closure (node:util.inspect shows no key material), never in a field.
 */
export function ed25519SignerOfSeed(seed: Uint8Array): Ed25519Signer {
  if (!(seed instanceof Uint8Array))
    throw new TypeError('an Ed25519 seed is a Uint8Array of 32 bytes');
  if (seed.length !== 32) throw new RangeError(`an Ed25519 seed has 32 bytes, not ${seed.length}`);
  const der = Buffer.alloc(PKCS8_ED25519_PREFIX.length + 32);
  der.set(PKCS8_ED25519_PREFIX);
  der.set(seed, PKCS8_ED25519_PREFIX.length);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  der.fill(0);
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = Uint8Array.from(spki.subarray(spki.length - 32));
  return {
    publicKey,
    sign(message: Uint8Array): Uint8Array {
      const signature = nodeSign(null, message, privateKey);
      return new Uint8Array(signature.buffer, signature.byteOffset, signature.length);
    },
  };
}

/**
 * Verifies a pure Ed25519 signature. Malformed points or lengths verify as false, never throw,
 * so callers can map the outcome onto V1's error code 10.
 */
export function verifyEd25519(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  try {
    return ed.verify(signature, message, publicKey);
  } catch {
    return false;
  }
}

/** A pure Ed25519 verifier: `(signature, message, publicKey) => valid`. */
export type Ed25519Verify = (
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
) => boolean;

const SPKI_ED25519_PREFIX = Uint8Array.from([
  0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
]);

/**
 * Verifies a pure Ed25519 signature with the platform's OpenSSL (node:crypto): about ten times
 * faster than `verifyEd25519`, for hot paths such as a node admitting transactions. OpenSSL
 * follows RFC 8032 strictly (like Go's crypto/ed25519); noble accepts a few more edge-case
 * encodings (ZIP-215). Malformed input verifies as false, never throws.
 */
export const verifyEd25519Native: Ed25519Verify = (signature, message, publicKey) => {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return nodeVerify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
};

/** Recently used public keys as OpenSSL key objects (building one costs about a third of a verify). */
const KEY_CACHE_SIZE = 1024;
const keyCache = new Map<string, KeyObject>();

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey).toString('hex');
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  const der = new Uint8Array(SPKI_ED25519_PREFIX.length + 32);
  der.set(SPKI_ED25519_PREFIX);
  der.set(publicKey, SPKI_ED25519_PREFIX.length);
  const key = createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
  if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value ?? '');
  keyCache.set(id, key);
  return key;
}

/** SHA-256 digest. */
export function sha256Digest(data: Uint8Array): Uint8Array {
  return sha256(data);
}

/** FIPS-202 SHA3-256 digest (not Keccak), as V1's `TxHash` uses. */
export function sha3Digest(data: Uint8Array): Uint8Array {
  return sha3_256(data);
}

/** 32 random bytes from the platform CSPRNG, for key generation. */
export function randomSeed(): Uint8Array {
  return ed.utils.randomSecretKey();
}
