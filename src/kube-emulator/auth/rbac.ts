// RBAC over the stored Roles and RoleBindings (no ClusterRoles are served): who a user is
// (name and groups, as the apiserver's authenticators say), whether a request's attributes are
// allowed (plugin/pkg/auth/authorizer/rbac `RuleAllows`, `appliesTo`), and which rules a user
// has in a namespace (what SelfSubjectRulesReview lists). Every authenticated user also has the
// bootstrap roles bound to `system:authenticated` (system:basic-user, system:discovery,
// system:public-info-viewer: plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).
import { isObject, objects, type JsonObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import type { Store } from '../store.ts';

/** A user as RBAC sees it. */
export interface UserInfo {
  name: string;
  groups: readonly string[];
}

/** What one request asks for. `resource` is the plural; `subresource` apart. */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string | undefined;
  /** '' for a cluster-scoped request. */
  namespace: string;
  name?: string | undefined;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What an authorization check found: allowed, and by which binding (the SSAR `reason`). */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** The rules every authenticated user has through the bootstrap ClusterRoleBindings. */
export const BASIC_RESOURCE_RULES: readonly ResourceRule[] = [
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
  },
];

export const BASIC_NON_RESOURCE_RULES: readonly NonResourceRule[] = [
  {
    verbs: ['get'],
    nonResourceURLs: [
      '/api',
      '/api/*',
      '/apis',
      '/apis/*',
      '/healthz',
      '/livez',
      '/openapi',
      '/openapi/*',
      '/readyz',
      '/version',
      '/version/',
    ],
  },
];

/** The rules of the admin (a member of system:masters: everything). */
export const ADMIN_RESOURCE_RULES: readonly ResourceRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
];
export const ADMIN_NON_RESOURCE_RULES: readonly NonResourceRule[] = [
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

const has = (list: readonly string[], value: string): boolean =>
  list.includes('*') || list.includes(value);

/** `RuleAllows`: verbs, groups, resources (`x/sub`, a star, or star-slash-sub) and resourceNames. */
export function ruleAllows(rule: ResourceRule, attrs: ResourceAttributes): boolean {
  if (!has(rule.verbs, attrs.verb) || !has(rule.apiGroups, attrs.group)) return false;
  const combined =
    attrs.subresource === undefined || attrs.subresource === ''
      ? attrs.resource
      : `${attrs.resource}/${attrs.subresource}`;
  const resourceMatch = rule.resources.some(
    (r) =>
      r === '*' ||
      r === combined ||
      (attrs.subresource !== undefined &&
        attrs.subresource !== '' &&
        r === `*/${attrs.subresource}`),
  );
  if (!resourceMatch) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && names.includes(attrs.name));
}

/** Whether a binding's subject is this user (`appliesToUser`). */
function subjectIs(subject: JsonObject, user: UserInfo, bindingNamespace: string): boolean {
  const name = typeof subject.name === 'string' ? subject.name : '';
  switch (subject.kind) {
    case 'User':
      return name === user.name;
    case 'Group':
      return user.groups.includes(name);
    case 'ServiceAccount': {
      const namespace =
        typeof subject.namespace === 'string' && subject.namespace !== ''
          ? subject.namespace
          : bindingNamespace;
      return user.name === `system:serviceaccount:${namespace}:${name}`;
    }
    default:
      return false;
  }
}

function subjectLabel(subject: JsonObject, bindingNamespace: string): string {
  const name = typeof subject.name === 'string' ? subject.name : '';
  if (subject.kind === 'ServiceAccount') {
    const namespace =
      typeof subject.namespace === 'string' && subject.namespace !== ''
        ? subject.namespace
        : bindingNamespace;
    return `ServiceAccount "${name}/${namespace}"`;
  }
  return `${typeof subject.kind === 'string' ? subject.kind : ''} "${name}"`;
}

interface Grant {
  binding: string;
  role: string;
  subject: string;
  rules: ResourceRule[];
}

/** The Roles bound to `user` in `namespace`, with the binding and subject that grant each. */
function grants(store: Store, user: UserInfo, namespace: string): Grant[] {
  if (namespace === '') return [];
  const bindings = store.list(
    kindOf('rbac.authorization.k8s.io', 'rolebindings').storage,
    namespace,
  );
  const roles = kindOf('rbac.authorization.k8s.io', 'roles').storage;
  const found: Grant[] = [];
  for (const binding of bindings) {
    const roleRef = binding.roleRef;
    if (!isObject(roleRef) || roleRef.kind !== 'Role' || typeof roleRef.name !== 'string') continue;
    const subject = objects(binding.subjects).find((s) => subjectIs(s, user, namespace));
    if (subject === undefined) continue;
    const role = store.get(roles, namespace, roleRef.name);
    if (role === undefined) continue;
    found.push({
      binding: binding.metadata.name ?? '',
      role: roleRef.name,
      subject: subjectLabel(subject, namespace),
      rules: objects(role.rules).map((rule) => ({
        verbs: strings(rule.verbs),
        apiGroups: strings(rule.apiGroups),
        resources: strings(rule.resources),
        ...(Array.isArray(rule.resourceNames)
          ? { resourceNames: strings(rule.resourceNames) }
          : {}),
      })),
    });
  }
  return found;
}

/** Whether RBAC allows the request, and why (the reason the apiserver's RBAC authorizer gives). */
export function authorizeResource(
  store: Store,
  user: UserInfo,
  attrs: ResourceAttributes,
): Decision {
  if (BASIC_RESOURCE_RULES.some((rule) => ruleAllows(rule, attrs))) {
    return {
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"',
    };
  }
  for (const grant of grants(store, user, attrs.namespace)) {
    if (grant.rules.some((rule) => ruleAllows(rule, attrs))) {
      return {
        allowed: true,
        reason: `RBAC: allowed by RoleBinding "${grant.binding}/${attrs.namespace}" of Role "${grant.role}" to ${grant.subject}`,
      };
    }
  }
  return { allowed: false, reason: '' };
}

/** Whether the bootstrap roles allow a non-resource request (`get /healthz`). */
export function authorizeNonResource(verb: string, path: string): boolean {
  return BASIC_NON_RESOURCE_RULES.some(
    (rule) =>
      has(rule.verbs, verb) &&
      rule.nonResourceURLs.some(
        (url) => url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))),
      ),
  );
}

/** Every rule `user` has in `namespace` (SelfSubjectRulesReview). */
export function rulesOf(
  store: Store,
  user: UserInfo,
  namespace: string,
): { resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[] } {
  return {
    resourceRules: [
      ...BASIC_RESOURCE_RULES,
      ...grants(store, user, namespace).flatMap((grant) => grant.rules),
    ].map((rule) => ({ ...rule })),
    nonResourceRules: BASIC_NON_RESOURCE_RULES.map((rule) => ({ ...rule })),
  };
}
