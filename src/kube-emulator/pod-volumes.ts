// A process-mode pod's private folder: configMap, secret and emptyDir volumes written as files
// (0700 folders, 0600 files), and the rewriting of mount paths to those folders (and to claims'
// folders, pod-claims.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { isObject, objects, type JsonObject } from './json.ts';
import { EnvError, type EnvSources } from './pod-env.ts';
import type { KubeObject } from './types.ts';

/** A container's mount: where the manifest says it is, and where it really is. */
export interface Mount {
  mountPath: string;
  hostPath: string;
}

function safeRelative(path: string): string {
  const normal = normalize(path).replace(/^(\.\.(\/|$))+/, '');
  if (normal.startsWith('/') || normal === '' || normal === '.')
    throw new EnvError(`invalid volume item path ${path}`);
  return normal;
}

async function writeEntries(folder: string, entries: [string, Buffer][]): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  for (const [path, content] of entries) {
    const file = join(folder, safeRelative(path));
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, content, { mode: 0o600 });
  }
}

function entriesOf(object: KubeObject, volume: JsonObject, isSecret: boolean): [string, Buffer][] {
  const data = isObject(object.data) ? object.data : {};
  const binary = isObject(object.binaryData) ? object.binaryData : {};
  const contentOf = (key: string): Buffer | undefined => {
    const value = data[key];
    if (typeof value === 'string')
      return isSecret ? Buffer.from(value, 'base64') : Buffer.from(value, 'utf8');
    const raw = binary[key];
    return typeof raw === 'string' ? Buffer.from(raw, 'base64') : undefined;
  };
  const items = objects(volume.items);
  if (items.length === 0) {
    return [...Object.keys(data), ...Object.keys(binary)].flatMap((key) => {
      const content = contentOf(key);
      return content === undefined ? [] : [[key, content] as [string, Buffer]];
    });
  }
  return items.flatMap((item) => {
    const key = typeof item.key === 'string' ? item.key : '';
    const content = contentOf(key);
    if (content === undefined)
      throw new EnvError(`couldn't find key ${key} in ${isSecret ? 'Secret' : 'ConfigMap'}`);
    return [[typeof item.path === 'string' ? item.path : key, content] as [string, Buffer]];
  });
}

/** Writes every volume of the pod under `folder/volumes/<name>`; returns each volume's folder. */
export async function writeVolumes(options: {
  pod: KubeObject;
  folder: string;
  sources: EnvSources;
}): Promise<Map<string, string>> {
  const { pod, folder, sources } = options;
  const spec = isObject(pod.spec) ? pod.spec : {};
  const paths = new Map<string, string>();
  for (const volume of objects(spec.volumes)) {
    // Claims are mounted from folders that outlive the pod (pod-claims.ts), not written here.
    if (isObject(volume.persistentVolumeClaim)) continue;
    const name = typeof volume.name === 'string' ? volume.name : '';
    const target = join(folder, 'volumes', name);
    if (isObject(volume.configMap) || isObject(volume.secret)) {
      const isSecret = isObject(volume.secret);
      const source = (isSecret ? volume.secret : volume.configMap) as JsonObject;
      const objectName = String(isSecret ? source.secretName : source.name);
      const object = isSecret ? sources.secret(objectName) : sources.configMap(objectName);
      if (object === undefined && source.optional !== true) {
        throw new EnvError(`${isSecret ? 'secret' : 'configmap'} "${objectName}" not found`);
      }
      await writeEntries(target, object === undefined ? [] : entriesOf(object, source, isSecret));
    } else await mkdir(target, { recursive: true, mode: 0o700 });
    paths.set(name, target);
  }
  return paths;
}

/** The mounts of a container, longest mount path first. */
export function mountsOf(container: JsonObject, volumes: ReadonlyMap<string, string>): Mount[] {
  return objects(container.volumeMounts)
    .flatMap((mount) => {
      const folder = volumes.get(typeof mount.name === 'string' ? mount.name : '');
      if (folder === undefined || typeof mount.mountPath !== 'string') return [];
      const sub =
        typeof mount.subPath === 'string' && mount.subPath !== ''
          ? join(folder, safeRelative(mount.subPath))
          : folder;
      return [{ mountPath: mount.mountPath.replace(/\/+$/, ''), hostPath: sub }];
    })
    .sort((a, b) => b.mountPath.length - a.mountPath.length);
}

/** Rewrites a value that begins with a mount path to the same place in the private folder. */
export function rewriteMountPath(value: string, mounts: readonly Mount[]): string {
  for (const mount of mounts) {
    if (value === mount.mountPath || value.startsWith(`${mount.mountPath}/`)) {
      return mount.hostPath + value.slice(mount.mountPath.length);
    }
  }
  return value;
}
