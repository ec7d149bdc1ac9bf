// Bearer tokens (an admin token, one token per ServiceAccount) and RBAC over Roles/RoleBindings.
import { randomBytes } from 'node:crypto';
import { isObject, objects } from './json.ts';
import { kindOf, type KindInfo } from './kinds.ts';
import { forbidden, unauthorized } from './status-errors.ts';
import type { Store } from './store.ts';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** Who made a request: the admin (all rights) or a ServiceAccount (checked when RBAC is on). */
export type Identity = { type: 'admin' } | { type: 'serviceAccount'; account: ServiceAccountRef };

/** One request as RBAC sees it. */
export interface Access {
  verb: string;
  info: KindInfo;
  subresource: string | undefined;
  /** '' for cluster-scoped requests. */
  namespace: string;
  name: string | undefined;
}

export function userName(account: ServiceAccountRef): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

export class Authenticator {
  readonly #adminToken: string | undefined;
  readonly #rbac: boolean;
  readonly #store: Store;
  readonly #accounts = new Map<string, ServiceAccountRef>();
  readonly #tokens = new Map<string, string>();

  /** With no admin token, any request (or none) is admin unless it carries a ServiceAccount token. */
  constructor(options: { adminToken: string | undefined; rbac: boolean; store: Store }) {
    this.#adminToken = options.adminToken;
    this.#rbac = options.rbac;
    this.#store = options.store;
  }

  /** The token of a ServiceAccount (the same one on every call). */
  issueToken(namespace: string, serviceAccount: string): string {
    const key = `${namespace}/${serviceAccount}`;
    let token = this.#tokens.get(key);
    if (token === undefined) {
      token = `sa-${randomBytes(24).toString('base64url')}`;
      this.#tokens.set(key, token);
      this.#accounts.set(token, { namespace, name: serviceAccount });
    }
    return token;
  }

  /** The identity behind an `Authorization` header; throws 401 when it is not accepted. */
  identify(header: string | undefined): Identity {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    if (token !== undefined) {
      const account = this.#accounts.get(token);
      if (account !== undefined) return { type: 'serviceAccount', account };
      if (token === this.#adminToken) return { type: 'admin' };
    }
    if (this.#adminToken === undefined) return { type: 'admin' };
    throw unauthorized();
  }

  /** Throws 403 Forbidden when RBAC is on and no Role bound to the account allows the access. */
  authorize(identity: Identity, access: Access): void {
    if (identity.type === 'admin' || !this.#rbac) return;
    if (!this.#allows(identity.account, access)) {
      throw forbidden({
        user: userName(identity.account),
        verb: access.verb,
        target: {
          group: access.info.group,
          resource:
            access.subresource === undefined
              ? access.info.resource
              : `${access.info.resource}/${access.subresource}`,
          ...(access.name === undefined ? {} : { name: access.name }),
        },
        namespace: access.namespace,
      });
    }
  }

  #allows(account: ServiceAccountRef, access: Access): boolean {
    if (access.namespace === '') return false; // only namespaced Roles exist here
    const bindings = this.#store.list(
      kindOf('rbac.authorization.k8s.io', 'rolebindings').storage,
      access.namespace,
    );
    const roles = kindOf('rbac.authorization.k8s.io', 'roles').storage;
    const resource =
      access.subresource === undefined
        ? access.info.resource
        : `${access.info.resource}/${access.subresource}`;
    for (const binding of bindings) {
      const roleRef = binding.roleRef;
      if (!isObject(roleRef) || roleRef.kind !== 'Role' || typeof roleRef.name !== 'string')
        continue;
      const bound = objects(binding.subjects).some(
        (subject) =>
          subject.kind === 'ServiceAccount' &&
          subject.name === account.name &&
          (subject.namespace ?? access.namespace) === account.namespace,
      );
      if (!bound) continue;
      const role = this.#store.get(roles, access.namespace, roleRef.name);
      for (const rule of objects(role?.rules)) {
        const has = (field: string, value: string): boolean =>
          Array.isArray(rule[field]) && (rule[field].includes(value) || rule[field].includes('*'));
        if (
          !has('apiGroups', access.info.group) ||
          !has('resources', resource) ||
          !has('verbs', access.verb)
        )
          continue;
        const names = Array.isArray(rule.resourceNames) ? rule.resourceNames : [];
        if (names.length === 0 || (access.name !== undefined && names.includes(access.name)))
          return true;
      }
    }
    return false;
  }
}
