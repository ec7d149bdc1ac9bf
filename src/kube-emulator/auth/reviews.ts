// The kinds the apiserver computes on create and never stores: SelfSubjectAccessReview and
// SelfSubjectRulesReview (`kubectl auth can-i [--list]`, pkg/registry/authorization), and
// SelfSubjectReview (`kubectl auth whoami`, pkg/registry/authentication/selfsubjectreview).
import { userOf, type Authenticator, type Identity } from './auth.ts';
import { isObject, type JsonObject } from '../json.ts';
import { authorizeNonResource } from './rbac.ts';
import { badRequest, invalid } from '../status-errors.ts';

function spec(body: unknown): JsonObject {
  if (!isObject(body)) throw badRequest('the body of the request must be a JSON object');
  return isObject(body.spec) ? body.spec : {};
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`. */
export function selfSubjectAccessReview(
  auth: Authenticator,
  identity: Identity,
  body: unknown,
): JsonObject {
  const request = spec(body);
  const resource = isObject(request.resourceAttributes) ? request.resourceAttributes : undefined;
  const nonResource = isObject(request.nonResourceAttributes)
    ? request.nonResourceAttributes
    : undefined;
  if ((resource === undefined) === (nonResource === undefined)) {
    throw invalid(
      {
        group: 'authorization.k8s.io',
        resource: 'selfsubjectaccessreviews',
        name: '',
        kind: 'SelfSubjectAccessReview',
      },
      [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.resourceAttributes',
          message: `Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
        },
      ],
    );
  }
  let status: JsonObject;
  if (resource !== undefined) {
    const decision = auth.decide(identity, {
      verb: text(resource.verb),
      group: text(resource.group),
      resource: text(resource.resource),
      subresource: text(resource.subresource),
      namespace: text(resource.namespace),
      name: text(resource.name) === '' ? undefined : text(resource.name),
    });
    status = {
      allowed: decision.allowed,
      ...(decision.reason === '' ? {} : { reason: decision.reason }),
    };
  } else {
    const allowed =
      identity.type === 'admin' ||
      !auth.rbac ||
      authorizeNonResource(text(nonResource?.verb), text(nonResource?.path));
    status = { allowed };
  }
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: request,
    status,
  };
}

/** `POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews`. */
export function selfSubjectRulesReview(
  auth: Authenticator,
  identity: Identity,
  body: unknown,
): JsonObject {
  const request = spec(body);
  const namespace = text(request.namespace);
  if (namespace === '') {
    throw invalid(
      {
        group: 'authorization.k8s.io',
        resource: 'selfsubjectrulesreviews',
        name: '',
        kind: 'SelfSubjectRulesReview',
      },
      [{ reason: 'FieldValueRequired', field: 'spec.namespace', message: 'Required value' }],
    );
  }
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: request,
    status: { ...auth.rules(identity, namespace), incomplete: false },
  };
}

/** `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`. */
export function selfSubjectReview(identity: Identity): JsonObject {
  const user = userOf(identity);
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: {
      userInfo: { username: user.name, groups: [...user.groups] },
    },
  };
}
