// Secrets and ConfigMaps (kubernetes pkg/apis/core/validation/validation.go, v1.32:
// ValidateSecret, ValidateSecretUpdate, ValidateConfigMap, ValidateConfigMapUpdate): keys, the
// 1 MiB limit (core.MaxSecretSize), the required keys of typed Secrets, `type` and `immutable`.
import { deepEqual, isObject, type JsonObject } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import {
  forbiddenCause,
  immutableCause,
  invalidCause,
  requiredCause,
  tooLongCause,
} from './field-errors.ts';
import { isConfigMapKey } from './name-formats.ts';

/** core.MaxSecretSize, also the limit of a ConfigMap's data. */
export const MAX_SECRET_SIZE = 1024 * 1024;

const IMMUTABLE = 'field is immutable when `immutable` is set';

function bag(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/** Bytes of a base64 value (Secret data, ConfigMap binaryData) as stored. */
function decodedLength(value: unknown): number {
  return typeof value === 'string' ? Buffer.from(value, 'base64').length : 0;
}

function keyCauses(path: string, data: JsonObject): StatusCause[] {
  return Object.keys(data).flatMap((key) =>
    isConfigMapKey(key).map((message) => invalidCause(`${path}[${key}]`, key, message)),
  );
}

/** The keys a typed Secret must have (the `switch secret.Type` of ValidateSecret). */
function typedSecretCauses(object: KubeObject, data: JsonObject): StatusCause[] {
  const has = (key: string): boolean => key in data;
  switch (object.type) {
    case 'kubernetes.io/service-account-token':
      return (object.metadata.annotations?.['kubernetes.io/service-account.name'] ?? '') === ''
        ? [requiredCause('metadata.annotations[kubernetes.io/service-account.name]')]
        : [];
    case 'kubernetes.io/dockercfg':
      return has('.dockercfg') ? [] : [requiredCause('data[.dockercfg]')];
    case 'kubernetes.io/dockerconfigjson':
      return has('.dockerconfigjson') ? [] : [requiredCause('data[.dockerconfigjson]')];
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password')
        ? []
        : [requiredCause('data[username]'), requiredCause('data[password]')];
    case 'kubernetes.io/ssh-auth':
      return decodedLength(data['ssh-privatekey']) > 0
        ? []
        : [requiredCause('data[ssh-privatekey]')];
    case 'kubernetes.io/tls':
      return [
        ...(has('tls.crt') ? [] : [requiredCause('data[tls.crt]')]),
        ...(has('tls.key') ? [] : [requiredCause('data[tls.key]')]),
      ];
    default:
      return [];
  }
}

/** ValidateSecret. */
export function secretRule(object: KubeObject): StatusCause[] {
  const data = bag(object.data);
  const causes = keyCauses('data', data);
  const size = Object.values(data).reduce<number>((sum, value) => sum + decodedLength(value), 0);
  if (size > MAX_SECRET_SIZE) causes.push(tooLongCause('data', MAX_SECRET_SIZE));
  causes.push(...typedSecretCauses(object, data));
  return causes;
}

/** ValidateSecretUpdate: `type` never changes; an immutable Secret's data neither. */
export function secretUpdateRule(object: KubeObject, old: KubeObject | undefined): StatusCause[] {
  if (old === undefined) return [];
  const causes: StatusCause[] = [];
  if (object.type !== old.type) causes.push(immutableCause('type', object.type ?? ''));
  if (old.immutable === true) {
    if (object.immutable !== true) causes.push(forbiddenCause('immutable', IMMUTABLE));
    if (!deepEqual(bag(object.data), bag(old.data))) causes.push(forbiddenCause('data', IMMUTABLE));
  }
  return causes;
}

/** ValidateConfigMap: keys of data and binaryData, no key in both, 1 MiB in all. */
export function configMapRule(object: KubeObject): StatusCause[] {
  const data = bag(object.data);
  const binary = bag(object.binaryData);
  const causes: StatusCause[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    causes.push(...keyCauses('data', { [key]: value }));
    if (key in binary)
      causes.push(invalidCause(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    size += typeof value === 'string' ? Buffer.byteLength(value) : 0;
  }
  causes.push(...keyCauses('binaryData', binary));
  for (const value of Object.values(binary)) size += decodedLength(value);
  if (size > MAX_SECRET_SIZE) causes.push(tooLongCause('', MAX_SECRET_SIZE));
  return causes;
}

/** ValidateConfigMapUpdate: an immutable ConfigMap keeps its data, binaryData and `immutable`. */
export function configMapUpdateRule(
  object: KubeObject,
  old: KubeObject | undefined,
): StatusCause[] {
  if (old?.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (object.immutable !== true) causes.push(forbiddenCause('immutable', IMMUTABLE));
  if (!deepEqual(bag(object.data), bag(old.data))) causes.push(forbiddenCause('data', IMMUTABLE));
  if (!deepEqual(bag(object.binaryData), bag(old.binaryData)))
    causes.push(forbiddenCause('binaryData', IMMUTABLE));
  return causes;
}
