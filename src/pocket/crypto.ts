// The primitives Pocket V1 uses: Ed25519 (pure, RFC 8032), SHA-256 for addresses, SHA3-256 for
// transaction hashes. Audited noble implementations; sync API enabled once here.
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
