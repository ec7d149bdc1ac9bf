// The primitives Pocket V1 uses: Ed25519 (pure, RFC 8032), SHA-256 for addresses, SHA3-256 for
// transaction hashes. Signing, the pure-JS verifier and key generation from the audited noble
// implementations; public keys, the fast verifier and the two digests on the platform's OpenSSL
// (a stake's SHA3-256: 16.5 µs on noble, 3.3 µs on OpenSSL, against about 250 µs to build and
// sign it; measured alone on this machine. Tests check both digests against noble's and against
// published vectors).
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes } from './bytes.ts';

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

const ORDER = ed.Point.CURVE().n;

function littleEndianNumber(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i] ?? 0);
  return value;
}

function littleEndian32(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let rest = value;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

/**
 * A seed's signer: the seed is expanded once (RFC 8032 5.1.5) and each signature does only the
 * per-message steps of 5.1.6 on noble (`ed.sign(m, seed)` repeats the expansion, a base-point
 * multiplication as costly as the signature's own, on every call). Signing stays on the audited
 * @noble/ed25519 (ADR 6; issue 15 keeps it); the public key comes from the platform's OpenSSL
 * (node:crypto), which takes microseconds where noble's first multiplication builds its base-point
 * tables (about 0.1 CPU s, paid by every node, manager and CLI start that reads a key; the first
 * signature pays it instead). Signatures are byte for byte noble's `ed.sign`, OpenSSL's and Go's
 * crypto/ed25519 (deterministic; the unit tests compare them). The expanded secret lives only in
 * this closure, never in a field (node:util.inspect shows nothing of it).
 */
export function ed25519SignerOfSeed(seed: Uint8Array): Ed25519Signer {
  if (!(seed instanceof Uint8Array))
    throw new TypeError('an Ed25519 seed is a Uint8Array of 32 bytes');
  if (seed.length !== 32) throw new RangeError(`an Ed25519 seed has 32 bytes, not ${seed.length}`);
  const head = sha512(seed);
  head[0] = (head[0] ?? 0) & 248;
  head[31] = ((head[31] ?? 0) & 127) | 64;
  const scalar = littleEndianNumber(head.subarray(0, 32));
  const prefix = head.slice(32);
  head.fill(0);
  const publicKey = opensslPublicKey(seed);
  return {
    publicKey,
    sign(message: Uint8Array): Uint8Array {
      // r = SHA-512(prefix || M) mod L; R = [r]B; k = SHA-512(R || A || M) mod L; S = r + k·s.
      // The nonce's digest reveals the key with the signature: zeroed once reduced (the prefix
      // is hashed in place, not copied).
      const nonce = sha512.create().update(prefix).update(message).digest();
      const r = littleEndianNumber(nonce) % ORDER;
      nonce.fill(0);
      const R = ed.Point.BASE.multiply(r).toBytes();
      const k = littleEndianNumber(sha512(concatBytes(R, publicKey, message))) % ORDER;
      return concatBytes(R, littleEndian32((r + k * scalar) % ORDER));
    },
  };
}

/** The Ed25519 public key of a seed, through OpenSSL (node:crypto); the DER copy is zeroed. */
function opensslPublicKey(seed: Uint8Array): Uint8Array {
  const der = Buffer.alloc(PKCS8_ED25519_PREFIX.length + 32);
  der.set(PKCS8_ED25519_PREFIX);
  der.set(seed, PKCS8_ED25519_PREFIX.length);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  der.fill(0);
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return Uint8Array.from(spki.subarray(spki.length - 32));
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
  return new Uint8Array(createHash('sha256').update(data).digest());
}

/** FIPS-202 SHA3-256 digest (not Keccak), as V1's `TxHash` uses. */
export function sha3Digest(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha3-256').update(data).digest());
}

/** The same digest in lowercase hex. */
export function sha3Hex(data: Uint8Array): string {
  return createHash('sha3-256').update(data).digest('hex');
}

/** 32 random bytes from the platform CSPRNG, for key generation. */
export function randomSeed(): Uint8Array {
  return ed.utils.randomSecretKey();
}
