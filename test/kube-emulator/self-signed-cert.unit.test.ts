// The emulator's self-signed certificate loads into Node's TLS whatever its random serial is.
import { createSecureContext } from 'node:tls';
import { X509Certificate, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../../src/kube-emulator/auth/self-signed-cert.ts';

describe('createSelfSignedCertificate', () => {
  it.each([
    ['zeros (the serial once began 00 00: "illegal padding")', (n: number) => Buffer.alloc(n)],
    ['ones', (n: number) => Buffer.alloc(n, 0xff)],
    ['0x80 then zeros', (n: number) => Buffer.concat([Buffer.from([0x80]), Buffer.alloc(n - 1)])],
  ])('loads with a serial source of %s', (_what, random) => {
    const { cert, key } = createSelfSignedCertificate(new Date(), random);
    expect(() => createSecureContext({ cert, key })).not.toThrow();
    const parsed = new X509Certificate(cert);
    expect(parsed.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(parsed.ca).toBe(true);
    expect(parsed.serialNumber).toMatch(/^[4-7]/);
  });

  it('loads with 300 random serials', () => {
    for (let i = 0; i < 300; i++) {
      const { cert, key } = createSelfSignedCertificate(new Date(), randomBytes);
      expect(() => createSecureContext({ cert, key })).not.toThrow();
    }
  });
});
