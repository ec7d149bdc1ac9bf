// The process kubelet's persistent volumes: each PersistentVolumeClaim gets a host folder
// `D/pvcs/<namespace>_<claim>_<uid8>/` (0700) the first time a pod mounts it. The folder outlives
// pods — the next pod of the same StatefulSet ordinal mounts the same claim and finds its data —
// and is removed when the claim itself is deleted, once no pod process of this kubelet still has
// it mounted. A claim deleted and created again has a new uid, so a new, empty folder.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isObject } from '../json.ts';
import { EnvError } from './pod-env.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject } from '../types.ts';
import { claimInfo } from '../kinds.ts';

export class ClaimFolders {
  readonly #api: ResourceApi;
  readonly #root: string;
  /** Folder → how many pod runs have it mounted. */
  readonly #mounted = new Map<string, number>();
  /** Folders of deleted claims that wait for their last pod to go. */
  readonly #doomed = new Set<string>();
  readonly #removals = new Set<Promise<void>>();
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; dir: string }) {
    this.#api = options.api;
    this.#root = join(options.dir, 'pvcs');
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      if (event.storage !== claimInfo.storage || event.type !== 'DELETED') return;
      const folder = this.#folderOf(event.object);
      if ((this.#mounted.get(folder) ?? 0) > 0) this.#doomed.add(folder);
      else this.#remove(folder);
    });
  }

  /** Where claim `name`'s data lives on this host. */
  #folderOf(claim: KubeObject): string {
    const meta = claim.metadata;
    return join(
      this.#root,
      `${meta.namespace ?? ''}_${meta.name ?? ''}_${(meta.uid ?? '').slice(0, 8)}`,
    );
  }

  /**
   * Mounts claim `name` for one pod run: the claim must exist, be Bound and not be deleted (the
   * kubelet retries until then, as a pod waits for its volume). Returns the folder; the caller
   * calls `release` with it when the run's processes are gone.
   */
  async mount(namespace: string, name: string): Promise<string> {
    const claim = this.#api.peek(claimInfo, namespace, name);
    if (claim === undefined) throw new EnvError(`persistentvolumeclaim "${name}" not found`);
    if (claim.metadata.deletionTimestamp !== undefined)
      throw new EnvError(`persistentvolumeclaim "${name}" is being deleted`);
    const phase = isObject(claim.status) ? claim.status.phase : undefined;
    if (phase !== 'Bound')
      throw new EnvError(`persistentvolumeclaim "${name}" is not bound (${String(phase)})`);
    const folder = this.#folderOf(claim);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    this.#mounted.set(folder, (this.#mounted.get(folder) ?? 0) + 1);
    return folder;
  }

  release(folder: string): void {
    const count = (this.#mounted.get(folder) ?? 1) - 1;
    if (count > 0) {
      this.#mounted.set(folder, count);
      return;
    }
    this.#mounted.delete(folder);
    if (this.#doomed.delete(folder)) this.#remove(folder);
  }

  #remove(folder: string): void {
    const removal = rm(folder, { recursive: true, force: true, maxRetries: 3 })
      .catch(() => undefined)
      .finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
  }

  /** Stops watching claims; waits for folder removals under way. */
  async stop(): Promise<void> {
    this.#unsubscribe();
    await Promise.all([...this.#removals]);
  }
}
