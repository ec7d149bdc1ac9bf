// `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (`kubectl create token`): the
// TokenRequest REST of pkg/registry/core/serviceaccount/storage/token.go — defaults (1 h, the
// apiserver's audience), validation (10 minutes to 2^32 s), an optional bound Pod or Secret — and
// a token the emulator then accepts for that ServiceAccount (service-account-tokens.ts).
import { rfc3339 } from '../clock.ts';
import { isObject, type JsonObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import { targetOf } from '../resource-api.ts';
import {
  API_AUDIENCE,
  type BoundObject,
  type ServiceAccountTokens,
} from './service-account-tokens.ts';
import { badRequest, conflict, invalid, notFound, type StatusCause } from '../status-errors.ts';

const serviceAccounts = kindOf('', 'serviceaccounts');

export function tokenRequest(options: {
  api: ResourceApi;
  tokens: ServiceAccountTokens;
  namespace: string;
  name: string;
  body: unknown;
}): JsonObject {
  const { api, tokens, namespace, name } = options;
  const body = isObject(options.body) ? options.body : {};
  const spec: JsonObject = isObject(body.spec) ? { ...body.spec } : {};
  const account = api.peek(serviceAccounts, namespace, name);
  if (account === undefined) throw notFound(targetOf(serviceAccounts, name));
  spec.expirationSeconds ??= 3600;
  if (!Array.isArray(spec.audiences) || spec.audiences.length === 0)
    spec.audiences = [API_AUDIENCE];
  const seconds = spec.expirationSeconds;
  const causes: StatusCause[] = [];
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) {
    throw badRequest('spec.expirationSeconds must be an integer');
  }
  if (seconds < 600) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      message: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
    });
  }
  if (seconds > 2 ** 32) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
    });
  }
  if (causes.length > 0) {
    throw invalid(
      { group: 'authentication.k8s.io', resource: 'tokenrequests', name: '', kind: 'TokenRequest' },
      causes,
    );
  }
  const bound = boundObject(api, namespace, spec.boundObjectRef);
  const now = api.now();
  const issuedAt = Math.floor(now / 1000);
  const token = tokens.issue({
    namespace,
    serviceAccount: { name, uid: account.metadata.uid ?? '' },
    audiences: (spec.audiences as unknown[]).map(String),
    issuedAt,
    expiresAt: issuedAt + seconds,
    ...(bound === undefined ? {} : { bound }),
  });
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: {
      name,
      namespace,
      creationTimestamp: null,
    },
    spec: { ...spec, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token, expirationTimestamp: rfc3339((issuedAt + seconds) * 1000) },
  };
}

/** The Pod or Secret a token is bound to: it must exist, with the uid given if one is. */
function boundObject(api: ResourceApi, namespace: string, ref: unknown): BoundObject | undefined {
  if (!isObject(ref)) return undefined;
  const kind = ref.kind;
  if (kind !== 'Pod' && kind !== 'Secret') {
    throw badRequest(
      `cannot bind token for ${typeof kind === 'string' ? kind : ''}: only Pod and Secret are supported`,
    );
  }
  const info = kindOf('', kind === 'Pod' ? 'pods' : 'secrets');
  const name = typeof ref.name === 'string' ? ref.name : '';
  const object = api.peek(info, namespace, name);
  if (object === undefined) throw notFound(targetOf(info, name));
  const uid = object.metadata.uid ?? '';
  if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== uid) {
    throw conflict(
      targetOf(info, name),
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return { kind, name, uid };
}
