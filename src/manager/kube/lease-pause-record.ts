// The managers' pause kept on the Lease (CM_LEASE_NAME) as the annotation
// `cluster-manager.dev/paused: "true" | "false"` (docs/adr/0025-pause-on-the-lease.md): every
// manager and every new pod reads it, and it outlives a manager pod and its emptyDir journal.
// With leader election only the Lease's holder writes it, with the resourceVersion it read as a
// precondition, so a replica that lost the Lease meanwhile cannot; a missing Lease is the
// elector's to create (it does so with the pause it knows). Without election the one manager
// creates the Lease (no holder) if it is missing.
import type { V1Lease } from '@kubernetes/client-node';
import { ManagerError } from '../errors.ts';
import { Annotations } from '../model.ts';
import type { PauseRecord } from '../pause/pause-state.ts';
import { apiStatus, describeApiError } from './client.ts';
import type { CoordinationApi } from './lean-api.ts';

export interface LeasePauseRecordOptions {
  coordination: CoordinationApi;
  namespace: string;
  name: string;
  identity: string;
  /** Leader election is on: only the Lease's holder writes. */
  election: boolean;
}

/** A write that meets this many conflicting writers in a row gives up (the elector renews too). */
const MAX_CONFLICTS = 5;

/** The pause a Lease records: undefined when it records none (or something else than a boolean). */
export function pausedOn(lease: V1Lease | undefined): boolean | undefined {
  const value = lease?.metadata?.annotations?.[Annotations.paused];
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

export class LeasePauseRecord implements PauseRecord {
  readonly #o: LeasePauseRecordOptions;
  readonly where: string;

  constructor(options: LeasePauseRecordOptions) {
    this.#o = options;
    this.where = `Lease ${options.name}`;
  }

  async read(): Promise<boolean | undefined> {
    return pausedOn(await this.#get());
  }

  async write(paused: boolean): Promise<void> {
    const { coordination, namespace, name, identity, election } = this.#o;
    for (let attempt = 1; attempt <= MAX_CONFLICTS; attempt++) {
      const lease = await this.#get();
      if (lease === undefined) {
        if (election)
          throw new ManagerError(
            'NOT_LEADER',
            `the ${this.where} is gone (deleted): no manager leads until one has created it again; nothing changed`,
          );
        if (await this.#create(paused)) return;
        continue;
      }
      const holder = lease.spec?.holderIdentity || undefined;
      if (election && holder !== identity)
        throw new ManagerError(
          'NOT_LEADER',
          `this manager (${identity}) does not hold the ${this.where} (${holder ?? 'nobody'} does); nothing changed`,
          { details: { leader: holder ?? null } },
        );
      const annotations = {
        ...lease.metadata?.annotations,
        [Annotations.paused]: String(paused),
      };
      try {
        await coordination.replaceNamespacedLease({
          name,
          namespace,
          body: { ...lease, metadata: { ...lease.metadata, name, namespace, annotations } },
        });
        return;
      } catch (error: unknown) {
        if (apiStatus(error) !== 409) throw this.#unavailable(paused, error);
      }
    }
    throw new ManagerError(
      'KUBE_UNAVAILABLE',
      `could not record the ${paused ? 'pause' : 'resume'} on the ${this.where}: ${MAX_CONFLICTS} conflicting writes in a row; nothing changed`,
    );
  }

  async #get(): Promise<V1Lease | undefined> {
    const { coordination, namespace, name } = this.#o;
    try {
      return await coordination.readNamespacedLease({ name, namespace });
    } catch (error: unknown) {
      if (apiStatus(error) === 404) return undefined;
      throw new ManagerError(
        'KUBE_UNAVAILABLE',
        `could not read the ${this.where}: ${describeApiError(error)}`,
        { cause: error },
      );
    }
  }

  /** False when someone created it first (then it is read again). */
  async #create(paused: boolean): Promise<boolean> {
    const { coordination, namespace, name } = this.#o;
    try {
      await coordination.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace, annotations: { [Annotations.paused]: String(paused) } },
          spec: {},
        },
      });
      return true;
    } catch (error: unknown) {
      if (apiStatus(error) === 409) return false;
      throw this.#unavailable(paused, error);
    }
  }

  #unavailable(paused: boolean, error: unknown): ManagerError {
    return new ManagerError(
      'KUBE_UNAVAILABLE',
      `could not record the ${paused ? 'pause' : 'resume'} on the ${this.where}: ${describeApiError(error)}; nothing changed`,
      { cause: error },
    );
  }
}
