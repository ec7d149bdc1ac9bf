// Bound ServiceAccount tokens (what TokenRequest issues): JWTs signed with the emulator's own
// ES256 key, with the claims the apiserver writes (pkg/serviceaccount/claims.go: iss, sub, aud,
// exp, iat, nbf, jti and the `kubernetes.io` claim naming the account and a bound object), and
// their validation: signature, time window, audience, and an account (and bound object) that
// still exists with the same uid.
import { generateKeyPairSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';

/** The issuer and the audience the apiserver accepts by default (`--api-audiences`). */
export const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

export interface BoundObject {
  kind: 'Pod' | 'Secret';
  name: string;
  uid: string;
}

export interface TokenClaims {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  audiences: readonly string[];
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  bound?: BoundObject;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

export class ServiceAccountTokens {
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #keyId: string;

  constructor() {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = pair.privateKey;
    this.#publicKey = pair.publicKey;
    this.#keyId = randomUUID().replaceAll('-', '');
  }

  /** A signed token for the claims. */
  issue(claims: TokenClaims): string {
    const header = { alg: 'ES256', kid: this.#keyId };
    const kubernetes: Record<string, unknown> = {
      namespace: claims.namespace,
      serviceaccount: { name: claims.serviceAccount.name, uid: claims.serviceAccount.uid },
    };
    if (claims.bound !== undefined) {
      kubernetes[claims.bound.kind.toLowerCase()] = {
        name: claims.bound.name,
        uid: claims.bound.uid,
      };
    }
    const payload = {
      aud: claims.audiences,
      exp: claims.expiresAt,
      iat: claims.issuedAt,
      iss: API_AUDIENCE,
      jti: randomUUID(),
      'kubernetes.io': kubernetes,
      nbf: claims.issuedAt,
      sub: `system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`,
    };
    const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    const signature = sign('sha256', Buffer.from(signed), {
      key: this.#privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${signed}.${base64url(signature)}`;
  }

  /**
   * What a bearer token is: not one of this emulator's (`foreign`), one of its tokens that is
   * not valid at `now` (ms) for the apiserver (bad signature, expired, another audience), or
   * valid with its claims.
   */
  verify(
    token: string,
    now: number,
  ): { kind: 'foreign' } | { kind: 'invalid' } | { kind: 'valid'; claims: TokenClaims } {
    const parts = token.split('.');
    if (parts.length !== 3) return { kind: 'foreign' };
    const [header, payload, signature] = parts as [string, string, string];
    try {
      const decoded = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as {
        kid?: unknown;
      };
      if (decoded.kid !== this.#keyId) return { kind: 'foreign' };
    } catch {
      return { kind: 'foreign' };
    }
    const claims = this.#check(header, payload, signature, now);
    return claims === undefined ? { kind: 'invalid' } : { kind: 'valid', claims };
  }

  #check(header: string, payload: string, signature: string, now: number): TokenClaims | undefined {
    const valid = verify(
      'sha256',
      Buffer.from(`${header}.${payload}`),
      { key: this.#publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    );
    if (!valid) return undefined;
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
        string,
        unknown
      >;
    } catch {
      return undefined;
    }
    const seconds = Math.floor(now / 1000);
    const exp = Number(claims.exp);
    const nbf = Number(claims.nbf);
    const aud = Array.isArray(claims.aud) ? claims.aud.map(String) : [];
    if (!(seconds < exp) || seconds < nbf || !aud.includes(API_AUDIENCE)) return undefined;
    const k8s = claims['kubernetes.io'] as
      | {
          namespace?: string;
          serviceaccount?: { name?: string; uid?: string };
          pod?: { name?: string; uid?: string };
          secret?: { name?: string; uid?: string };
        }
      | undefined;
    const namespace = k8s?.namespace;
    const account = k8s?.serviceaccount;
    if (namespace === undefined || account?.name === undefined || account.uid === undefined)
      return undefined;
    const boundRef = k8s?.pod ?? k8s?.secret;
    const bound: BoundObject | undefined =
      boundRef?.name === undefined || boundRef.uid === undefined
        ? undefined
        : {
            kind: k8s?.pod === undefined ? 'Secret' : 'Pod',
            name: boundRef.name,
            uid: boundRef.uid,
          };
    return {
      namespace,
      serviceAccount: { name: account.name, uid: account.uid },
      audiences: aud,
      issuedAt: Number(claims.iat),
      expiresAt: exp,
      ...(bound === undefined ? {} : { bound }),
    };
  }
}
