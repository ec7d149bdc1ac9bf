// Protocol library: building/signing and decoding/verifying stake transactions, against
// node:crypto (OpenSSL) Ed25519 sign/verify of the same bytes as the floor.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import {
  admitTransaction,
  parsePrivateKey,
  signableBytes,
  signTransaction,
  stakeMessage,
  decodeTransaction,
} from '../src/pocket/index.ts';
import { opsPerSecond, runAlone, throughput, type BenchResult } from './bench-types.ts';

const KEY =
  '90ccfd6ba76d876e02ba09440af67582e0f4a37cbda2ce4c30b251132b670eda2777a49cdfde21867a538ddcfca05002f0115b1955a75b80e965ed63fc95f809';

export async function run(): Promise<BenchResult[]> {
  const key = parsePrivateKey(KEY);
  const message = () =>
    stakeMessage({
      publicKey: key.publicKey,
      amount: '150000000001',
      chains: ['0001'],
      serviceUrl: 'validator-005.validators.default.svc.cluster.local:42069',
      outputAddress: key.addressBytes,
      signer: key.addressBytes,
    });
  const sample = signTransaction({ message: message(), key, nonce: '1' });
  const decoded = decodeTransaction(sample.bytes);
  const signable = signableBytes({ msg: decoded.msg, nonce: decoded.nonce });
  const signature = decoded.signature?.signature ?? new Uint8Array();

  const privateKey = createPrivateKey({
    key: Buffer.concat([
      Buffer.from('302e020100300506032b657004220420', 'hex'),
      Buffer.from(KEY.slice(0, 64), 'hex'),
    ]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);

  const buildRate = opsPerSecond(() => signTransaction({ message: message(), key }));
  const signFloor = opsPerSecond(() => sign(null, signable, privateKey));
  const admitRate = opsPerSecond(() => admitTransaction(sample.bytes));
  const verifyFloor = opsPerSecond(() => verify(null, signable, publicKey, signature));
  await Promise.resolve();
  return [
    throughput('pocket: build + sign + encode a stake tx', buildRate, {
      name: 'node:crypto Ed25519 sign of the same bytes',
      value: signFloor,
    }),
    throughput('pocket: decode + verify (stage A) a stake tx', admitRate, {
      name: 'node:crypto Ed25519 verify of the same bytes',
      value: verifyFloor,
    }),
  ];
}

await runAlone(run, import.meta);
