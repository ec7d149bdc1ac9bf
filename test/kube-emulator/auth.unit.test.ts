// Tokens are compared in constant time (issue 16): the admin token through `timingSafeEqual` over
// fixed-length SHA-256 digests, whatever the length of what a client sends.
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { Authenticator } from '../../src/kube-emulator/auth/auth.ts';
import { Store } from '../../src/kube-emulator/store.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const compare = vi.mocked(crypto.timingSafeEqual);

describe('Authenticator', () => {
  it('compares the admin token in constant time over equal-length digests', () => {
    const auth = new Authenticator({
      adminToken: 'the-admin-token',
      rbac: false,
      store: new Store({ historySize: 10 }),
    });
    compare.mockClear();
    for (const attempt of ['t', 'the-admin-tokem', 'the-admin-token-and-more']) {
      expect(() => auth.identify(`Bearer ${attempt}`)).toThrow('Unauthorized');
    }
    expect(compare).toHaveBeenCalledTimes(3);
    for (const [a, b] of compare.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
    compare.mockClear();
    expect(auth.identify('Bearer the-admin-token')).toEqual({ type: 'admin' });
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('finds a ServiceAccount token by its digest and refuses any other without an admin token match', () => {
    const auth = new Authenticator({
      adminToken: 'admin',
      rbac: true,
      store: new Store({ historySize: 10 }),
    });
    const token = auth.issueToken('default', 'manager');
    expect(auth.identify(`Bearer ${token}`)).toEqual({
      type: 'serviceAccount',
      account: { namespace: 'default', name: 'manager' },
    });
    expect(() => auth.identify(`Bearer ${token.slice(0, -1)}x`)).toThrow('Unauthorized');
    expect(() => auth.identify(undefined)).toThrow('Unauthorized');
  });
});
