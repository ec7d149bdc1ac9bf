// Independent Ed25519 and SHA-256 from node:crypto (OpenSSL), to check the noble-based signer.
import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

const SEED_DER_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const PUBLIC_DER_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function nodeSign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  const key = createPrivateKey({
    key: Buffer.concat([SEED_DER_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  return sign(null, message, key);
}

export function nodeVerify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  const key = createPublicKey({
    key: Buffer.concat([PUBLIC_DER_PREFIX, publicKey]),
    format: 'der',
    type: 'spki',
  });
  return verify(null, message, key, signature);
}

export function nodeSha256(data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest();
}
