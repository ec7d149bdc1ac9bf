// A container's environment as a kubelet builds it: envFrom, env with value / secretKeyRef /
// configMapKeyRef / fieldRef, and `$(VAR)` expansion.
import { isObject, objects, type JsonObject } from '../json.ts';
import type { KubeObject } from '../types.ts';

/** Reads the stored Secrets and ConfigMaps of the pod's namespace. */
export interface EnvSources {
  secret(name: string): KubeObject | undefined;
  configMap(name: string): KubeObject | undefined;
}

/** A reference that cannot be resolved yet (the kubelet reports CreateContainerConfigError). */
export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

/**
 * Expands `$(VAR)` from `vars`; `$$` is an escaped `$`; a reference to an unknown variable is
 * left as it is, as Kubernetes does.
 */
export function expand(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(
    /\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g,
    (match, name: string | undefined) => {
      if (match === '$$') return '$';
      return name !== undefined && Object.hasOwn(vars, name) ? (vars[name] ?? '') : match;
    },
  );
}

function dataValue(
  object: KubeObject | undefined,
  key: string,
  isSecret: boolean,
): string | undefined {
  if (object === undefined) return undefined;
  const data = isObject(object.data) ? object.data : {};
  const value = data[key];
  if (typeof value === 'string')
    return isSecret ? Buffer.from(value, 'base64').toString('utf8') : value;
  const binary = isObject(object.binaryData) ? object.binaryData[key] : undefined;
  return typeof binary === 'string' ? Buffer.from(binary, 'base64').toString('utf8') : undefined;
}

function fieldValue(pod: KubeObject, path: string, podIP: string): string {
  const meta = pod.metadata;
  const spec = isObject(pod.spec) ? pod.spec : {};
  const labelRef = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (labelRef?.[1] !== undefined && labelRef[2] !== undefined) {
    const map = labelRef[1] === 'labels' ? meta.labels : meta.annotations;
    return map?.[labelRef[2]] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'status.podIP':
    case 'status.hostIP':
      return podIP;
    case 'spec.nodeName':
      return typeof spec.nodeName === 'string' ? spec.nodeName : '';
    case 'spec.serviceAccountName':
      return typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
    default:
      throw new EnvError(`unsupported fieldRef ${path}`);
  }
}

function referenced(ref: unknown, sources: EnvSources, isSecret: boolean): string | undefined {
  if (!isObject(ref)) return undefined;
  const name = typeof ref.name === 'string' ? ref.name : '';
  const key = typeof ref.key === 'string' ? ref.key : '';
  const object = isSecret ? sources.secret(name) : sources.configMap(name);
  const value = dataValue(object, key, isSecret);
  if (value === undefined && ref.optional !== true) {
    const kind = isSecret ? 'secret' : 'configmap';
    throw new EnvError(
      object === undefined
        ? `${kind} "${name}" not found`
        : `couldn't find key ${key} in ${kind} ${name}`,
    );
  }
  return value;
}

/** The resolved environment of `container` (in order); throws EnvError on a missing reference. */
export function resolveEnv(options: {
  pod: KubeObject;
  container: JsonObject;
  sources: EnvSources;
  podIP: string;
}): Record<string, string> {
  const { pod, container, sources, podIP } = options;
  const env: Record<string, string> = {};
  for (const from of objects(container.envFrom)) {
    const prefix = typeof from.prefix === 'string' ? from.prefix : '';
    const isSecret = isObject(from.secretRef);
    const ref = isSecret ? from.secretRef : from.configMapRef;
    if (!isObject(ref)) continue;
    const name = typeof ref.name === 'string' ? ref.name : '';
    const object = isSecret ? sources.secret(name) : sources.configMap(name);
    if (object === undefined) {
      if (ref.optional === true) continue;
      throw new EnvError(`${isSecret ? 'secret' : 'configmap'} "${name}" not found`);
    }
    const data = isObject(object.data) ? object.data : {};
    for (const key of Object.keys(data)) env[prefix + key] = dataValue(object, key, isSecret) ?? '';
  }
  for (const variable of objects(container.env)) {
    const name = typeof variable.name === 'string' ? variable.name : '';
    if (name === '') continue;
    if (typeof variable.value === 'string') {
      env[name] = expand(variable.value, env);
      continue;
    }
    const from = isObject(variable.valueFrom) ? variable.valueFrom : {};
    let value: string | undefined;
    if (from.secretKeyRef !== undefined) value = referenced(from.secretKeyRef, sources, true);
    else if (from.configMapKeyRef !== undefined)
      value = referenced(from.configMapKeyRef, sources, false);
    else if (isObject(from.fieldRef) && typeof from.fieldRef.fieldPath === 'string') {
      value = fieldValue(pod, from.fieldRef.fieldPath, podIP);
    } else value = '';
    if (value !== undefined) env[name] = value;
  }
  return env;
}
