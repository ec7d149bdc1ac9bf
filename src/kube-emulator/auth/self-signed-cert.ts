// A self-signed ECDSA P-256 certificate for 127.0.0.1/localhost, built with node:crypto and a
// small DER encoder (no openssl binary, no npm dependency; see docs/adr/0003).
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...parts: Buffer[]): Buffer => tlv(0x30, ...parts);
const set = (...parts: Buffer[]): Buffer => tlv(0x31, ...parts);
const octets = (body: Buffer): Buffer => tlv(0x04, body);
const bitString = (body: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.from([unused]), body);
const boolTrue = (): Buffer => Buffer.from([0x01, 0x01, 0xff]);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const value of rest) {
    const chunk: number[] = [];
    let v = value;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] = (chunk[i] ?? 0) | 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

function extension(id: string, value: Buffer, critical: boolean): Buffer {
  return critical ? sequence(oid(id), boolTrue(), octets(value)) : sequence(oid(id), octets(value));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

export interface SelfSignedCertificate {
  /** PEM certificate; it is its own CA (clients pass it as `ca`). */
  cert: string;
  /** PEM PKCS#8 private key. */
  key: string;
}

/**
 * A certificate valid for one year for `localhost` and 127.0.0.1, usable as a server cert and as
 * its CA. `random`: the serial's source (tests pass their own).
 */
export function createSelfSignedCertificate(
  now: Date = new Date(),
  random: (size: number) => Buffer = randomBytes,
): SelfSignedCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  // A DER INTEGER is minimal and positive: the first byte is 0x40–0x7f. Only clearing the top
  // bit let a serial start 0x00 then < 0x80 (1 in 256), which OpenSSL refuses ("illegal
  // padding") when the server loads the certificate.
  const serial = random(16);
  serial[0] = 0x40 | ((serial[0] ?? 0) & 0x3f);
  const subject = name('kube-emulator');
  const extensions = sequence(
    extension('2.5.29.19', sequence(boolTrue()), true), // basicConstraints: CA
    extension('2.5.29.15', bitString(Buffer.from([0x84]), 2), true), // keyUsage: digitalSignature, keyCertSign
    extension('2.5.29.37', sequence(oid('1.3.6.1.5.5.7.3.1')), false), // extKeyUsage: serverAuth
    extension(
      '2.5.29.17',
      sequence(tlv(0x82, Buffer.from('localhost')), tlv(0x87, Buffer.from([127, 0, 0, 1]))),
      false,
    ),
  );
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    ecdsaWithSha256,
    subject,
    sequence(
      utcTime(new Date(now.getTime() - 3_600_000)),
      utcTime(new Date(now.getTime() + 365 * 86_400_000)),
    ),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, ecdsaWithSha256, bitString(signature));
  return {
    cert: pem('CERTIFICATE', certificate),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
