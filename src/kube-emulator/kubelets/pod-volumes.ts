// A process-mode pod's private folder: configMap, secret and emptyDir volumes written as files
// (0700 folders, 0600 files) and rewritten when their object changes, as the kubelet's atomic
// writer does; and the rewriting of mount paths to those folders (and to claims' folders,
// pod-claims.ts).
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, normalize } from 'node:path';
import { isObject, objects, type JsonObject } from '../json.ts';
import { EnvError, type EnvSources } from './pod-env.ts';
import type { KubeObject } from '../types.ts';

/** A container's mount: where the manifest says it is, and where it really is. */
export interface Mount {
  mountPath: string;
  hostPath: string;
}

/**
 * A configMap or secret volume whose setup failed: a real kubelet's `MountVolume.SetUp` error
 * (pkg/volume/secret/secret.go `SetUpAt`, pkg/volume/configmap/configmap.go `SetUpAt`). The
 * message is the kubelet's own; it names the object and the key, never a value.
 */
export class MountError extends EnvError {
  readonly volume: string;
  constructor(volume: string, message: string) {
    super(message);
    this.name = 'MountError';
    this.volume = volume;
  }
}

function safeRelative(path: string): string {
  const normal = normalize(path).replace(/^(\.\.(\/|$))+/, '');
  if (normal.startsWith('/') || normal === '' || normal === '.')
    throw new EnvError(`invalid volume item path ${path}`);
  return normal;
}

/** Whether `file` already holds exactly `content` (AtomicWriter's `shouldWriteFile`). */
async function holds(file: string, content: Buffer): Promise<boolean> {
  try {
    return (await readFile(file)).equals(content);
  } catch {
    return false;
  }
}

/**
 * Makes `folder` hold exactly `payload` (relative path → content), as pkg/volume/util/
 * atomic_writer.go `Write` does: unchanged files are left alone, a changed or new file is written
 * to a temporary name beside it (0600, names starting `..`, which AtomicWriter reserves and which
 * no payload path can take) and renamed over the old one, so a reader sees the old content or the
 * new, never a part; files no longer in the payload are removed (its step 10). AtomicWriter swaps
 * the whole set at once through its `..data` symlink; here each file is swapped on its own, which
 * a reader of one key file cannot tell apart.
 */
async function project(folder: string, payload: ReadonlyMap<string, Buffer>): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  for (const [path, content] of payload) {
    const file = join(folder, path);
    if (await holds(file, content)) continue;
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const temp = join(dirname(file), `..${basename(file)}.${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(temp, content, { mode: 0o600, flag: 'wx' });
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
  }
  for (const path of await readdir(folder, { recursive: true })) {
    if (payload.has(path) || path.split('/').some((part) => part.startsWith('..'))) continue;
    const info = await stat(join(folder, path)).catch(() => undefined);
    if (info?.isFile() === true) await rm(join(folder, path), { force: true });
  }
}

/**
 * The files of a configMap or secret volume (pkg/volume/secret/secret.go `MakePayload`): every
 * key, or the `items` listed. A missing object fails the setup unless the volume is `optional`
 * (then it is empty); so does an item whose key is missing, unless `optional` (then that item is
 * left out).
 */
function payloadOf(volume: JsonObject, sources: EnvSources): Map<string, Buffer> {
  const name = typeof volume.name === 'string' ? volume.name : '';
  const isSecret = isObject(volume.secret);
  const source = (isSecret ? volume.secret : volume.configMap) as JsonObject;
  const optional = source.optional === true;
  const objectName = String(isSecret ? source.secretName : source.name);
  const object = isSecret ? sources.secret(objectName) : sources.configMap(objectName);
  if (object === undefined) {
    if (optional) return new Map();
    throw new MountError(name, `${isSecret ? 'secret' : 'configmap'} "${objectName}" not found`);
  }
  const data = isObject(object.data) ? object.data : {};
  const binary = isObject(object.binaryData) ? object.binaryData : {};
  const contentOf = (key: string): Buffer | undefined => {
    const value = data[key];
    if (typeof value === 'string')
      return isSecret ? Buffer.from(value, 'base64') : Buffer.from(value, 'utf8');
    const raw = binary[key];
    return typeof raw === 'string' ? Buffer.from(raw, 'base64') : undefined;
  };
  const payload = new Map<string, Buffer>();
  const items = objects(source.items);
  if (items.length === 0) {
    for (const key of [...Object.keys(data), ...Object.keys(binary)]) {
      const content = contentOf(key);
      if (content !== undefined) payload.set(safeRelative(key), content);
    }
    return payload;
  }
  for (const item of items) {
    const key = typeof item.key === 'string' ? item.key : '';
    const content = contentOf(key);
    if (content === undefined) {
      if (optional) continue;
      throw new MountError(
        name,
        isSecret
          ? `references non-existent secret key: ${key}`
          : `configmap references non-existent config key: ${key}`,
      );
    }
    payload.set(safeRelative(typeof item.path === 'string' ? item.path : key), content);
  }
  return payload;
}

function isProjected(volume: JsonObject): boolean {
  return isObject(volume.configMap) || isObject(volume.secret);
}

function volumeName(volume: JsonObject): string {
  return typeof volume.name === 'string' ? volume.name : '';
}

/**
 * Writes every volume of the pod under `folder/volumes/<name>`; returns each volume's folder.
 * A configMap or secret volume that cannot be set up throws a MountError.
 */
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
    const target = join(folder, 'volumes', volumeName(volume));
    if (isProjected(volume)) await project(target, payloadOf(volume, sources));
    else await mkdir(target, { recursive: true, mode: 0o700 });
    paths.set(volumeName(volume), target);
  }
  return paths;
}

/**
 * Rewrites the configMap and secret volumes of a running pod from their objects' current content,
 * as the kubelet's periodic remount does (the secret and configMap plugins' `RequiresRemount` is
 * true, so pkg/kubelet/volumemanager marks the pod's volumes for remount at each sync and runs
 * `SetUpAt` again). A volume that cannot be set up now keeps its files, as a failed remount does;
 * its MountError is returned for a `FailedMount` Event.
 */
export async function refreshVolumes(options: {
  pod: KubeObject;
  folder: string;
  sources: EnvSources;
}): Promise<MountError[]> {
  const { pod, folder, sources } = options;
  const spec = isObject(pod.spec) ? pod.spec : {};
  const failures: MountError[] = [];
  for (const volume of objects(spec.volumes).filter(isProjected)) {
    let payload: Map<string, Buffer>;
    try {
      payload = payloadOf(volume, sources);
    } catch (error: unknown) {
      if (!(error instanceof EnvError)) throw error;
      failures.push(
        error instanceof MountError ? error : new MountError(volumeName(volume), error.message),
      );
      continue;
    }
    await project(join(folder, 'volumes', volumeName(volume)), payload);
  }
  return failures;
}

/** Whether the pod mounts the Secret (`secrets`) or ConfigMap (`configmaps`) of that name. */
export function mountsObject(
  pod: KubeObject,
  resource: 'secrets' | 'configmaps',
  name: string,
): boolean {
  const spec = isObject(pod.spec) ? pod.spec : {};
  return objects(spec.volumes).some((volume) =>
    resource === 'secrets'
      ? isObject(volume.secret) && volume.secret.secretName === name
      : isObject(volume.configMap) && volume.configMap.name === name,
  );
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
