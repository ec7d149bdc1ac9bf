// Who makes a request (the admin token, a ServiceAccount's token, an impersonated user) and
// whether RBAC lets them (rbac.ts). Every token comparison is constant-time: a secret token is
// compared through its SHA-256 digest with `timingSafeEqual`, and ServiceAccount tokens are
// looked up by digest or verified by signature.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { kindOf, type KindInfo } from '../kinds.ts';
import {
  ADMIN_NON_RESOURCE_RULES,
  ADMIN_RESOURCE_RULES,
  authorizeResource,
  rulesOf,
  type Decision,
  type NonResourceRule,
  type ResourceAttributes,
  type ResourceRule,
  type UserInfo,
} from './rbac.ts';
import { ServiceAccountTokens, type TokenClaims } from './service-account-tokens.ts';
import { forbidden, unauthorized } from '../status-errors.ts';
import type { Store } from '../store.ts';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/**
 * Who made a request: the admin (all rights, like a member of system:masters), a ServiceAccount
 * (checked when RBAC is on), or a user the admin impersonates (`--as`).
 */
export type Identity =
  | { type: 'admin' }
  | { type: 'serviceAccount'; account: ServiceAccountRef }
  | { type: 'user'; user: UserInfo };

/** One request as RBAC sees it. */
export interface Access {
  verb: string;
  info: KindInfo;
  subresource: string | undefined;
  /** '' for cluster-scoped requests. */
  namespace: string;
  name: string | undefined;
}

/** `Impersonate-User` / `Impersonate-Group` headers. */
export interface Impersonation {
  user: string | undefined;
  groups: readonly string[];
}

export function userName(account: ServiceAccountRef): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

const ADMIN_USER: UserInfo = {
  name: 'kubernetes-admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** The user behind an identity, with the groups the apiserver's authenticators add. */
export function userOf(identity: Identity): UserInfo {
  switch (identity.type) {
    case 'admin':
      return ADMIN_USER;
    case 'serviceAccount':
      return {
        name: userName(identity.account),
        groups: [
          'system:serviceaccounts',
          `system:serviceaccounts:${identity.account.namespace}`,
          'system:authenticated',
        ],
      };
    case 'user':
      return identity.user;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

const serviceAccounts = kindOf('', 'serviceaccounts');

export class Authenticator {
  readonly #adminDigest: Buffer | undefined;
  readonly #rbac: boolean;
  readonly #store: Store;
  readonly #now: () => number;
  /** Opaque ServiceAccount tokens (`issueToken`), by the hex digest of the token. */
  readonly #accounts = new Map<string, ServiceAccountRef>();
  readonly #tokens = new Map<string, string>();
  /** Signs and checks TokenRequest tokens. */
  readonly bound = new ServiceAccountTokens();

  /** With no admin token, any request (or none) is admin unless it carries a ServiceAccount token. */
  constructor(options: {
    adminToken: string | undefined;
    rbac: boolean;
    store: Store;
    now?: () => number;
  }) {
    this.#adminDigest = options.adminToken === undefined ? undefined : digest(options.adminToken);
    this.#rbac = options.rbac;
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
  }

  /** Whether RBAC is checked for ServiceAccounts and impersonated users. */
  get rbac(): boolean {
    return this.#rbac;
  }

  /** The token of a ServiceAccount (the same one on every call). */
  issueToken(namespace: string, serviceAccount: string): string {
    const key = `${namespace}/${serviceAccount}`;
    let token = this.#tokens.get(key);
    if (token === undefined) {
      token = `sa-${randomBytes(24).toString('base64url')}`;
      this.#tokens.set(key, token);
      this.#accounts.set(digest(token).toString('hex'), { namespace, name: serviceAccount });
    }
    return token;
  }

  /**
   * The identity behind an `Authorization` header (and the impersonation headers); throws 401
   * when the token is not accepted, 403 when a non-admin tries to impersonate under RBAC.
   */
  identify(header: string | undefined, impersonation?: Impersonation): Identity {
    const identity = this.#authenticate(header);
    const as = impersonation?.user;
    if (as === undefined || as === '') return identity;
    if (identity.type !== 'admin' && this.#rbac) {
      throw forbidden({
        user: userOf(identity).name,
        verb: 'impersonate',
        target: { group: '', resource: 'users', name: as },
        namespace: '',
      });
    }
    const account = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(as);
    if (account?.[1] !== undefined && account[2] !== undefined) {
      return { type: 'serviceAccount', account: { namespace: account[1], name: account[2] } };
    }
    return {
      type: 'user',
      user: { name: as, groups: [...(impersonation?.groups ?? []), 'system:authenticated'] },
    };
  }

  #authenticate(header: string | undefined): Identity {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    if (token !== undefined) {
      const hashed = digest(token);
      const account = this.#accounts.get(hashed.toString('hex'));
      if (account !== undefined) return { type: 'serviceAccount', account };
      if (this.#adminDigest !== undefined && timingSafeEqual(hashed, this.#adminDigest))
        return { type: 'admin' };
      // One of the emulator's own bound tokens is refused once it is no longer valid, even where
      // unknown tokens are taken as the admin's (no admin token set).
      const bound = this.bound.verify(token, this.#now());
      if (bound.kind === 'valid' && this.#stillBound(bound.claims)) {
        const { claims } = bound;
        return {
          type: 'serviceAccount',
          account: { namespace: claims.namespace, name: claims.serviceAccount.name },
        };
      }
      if (bound.kind !== 'foreign') throw unauthorized();
    }
    if (this.#adminDigest === undefined) return { type: 'admin' };
    throw unauthorized();
  }

  /** A bound token is valid while its account (and bound object) exist with the same uid. */
  #stillBound(claims: TokenClaims): boolean {
    const account = this.#store.get(
      serviceAccounts.storage,
      claims.namespace,
      claims.serviceAccount.name,
    );
    if (account?.metadata.uid !== claims.serviceAccount.uid) return false;
    if (claims.bound === undefined) return true;
    const info = kindOf('', claims.bound.kind === 'Pod' ? 'pods' : 'secrets');
    const object = this.#store.get(info.storage, claims.namespace, claims.bound.name);
    return (
      object?.metadata.uid === claims.bound.uid && object.metadata.deletionTimestamp === undefined
    );
  }

  /** RBAC's decision for any resource attributes (SelfSubjectAccessReview). */
  decide(identity: Identity, attrs: ResourceAttributes): Decision {
    if (identity.type === 'admin') return { allowed: true, reason: '' };
    if (!this.#rbac) return { allowed: true, reason: 'RBAC is off in this emulator' };
    return authorizeResource(this.#store, userOf(identity), attrs);
  }

  /** Every rule the identity has in a namespace (SelfSubjectRulesReview). */
  rules(
    identity: Identity,
    namespace: string,
  ): { resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[] } {
    const basic = rulesOf(this.#store, userOf(identity), namespace);
    if (identity.type !== 'admin' && this.#rbac) return basic;
    return {
      resourceRules: [...ADMIN_RESOURCE_RULES.map((r) => ({ ...r })), ...basic.resourceRules],
      nonResourceRules: [
        ...ADMIN_NON_RESOURCE_RULES.map((r) => ({ ...r })),
        ...basic.nonResourceRules,
      ],
    };
  }

  /** Throws 403 Forbidden when RBAC is on and no Role bound to the identity allows the access. */
  authorize(identity: Identity, access: Access): void {
    if (identity.type === 'admin' || !this.#rbac) return;
    const decision = authorizeResource(this.#store, userOf(identity), {
      verb: access.verb,
      group: access.info.group,
      resource: access.info.resource,
      subresource: access.subresource,
      namespace: access.namespace,
      name: access.name,
    });
    if (!decision.allowed) {
      throw forbidden({
        user: userOf(identity).name,
        verb: access.verb,
        target: {
          group: access.info.group,
          resource: access.info.resource,
          ...(access.name === undefined ? {} : { name: access.name }),
        },
        subresource: access.subresource,
        namespace: access.namespace,
      });
    }
  }
}
