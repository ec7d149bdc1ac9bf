// Discovery from a Kubernetes cluster: informers on the validator pods, their StatefulSets and the
// keys Secret; a direct read of a StatefulSet stands in for a lagging cache; Events through the
// API; leader election through a Lease.
import type { V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import type { Config } from '../config.ts';
import { apiStatus, kubeFailure, type KubeClients } from '../kube/client.ts';
import { EventRecorder, type EventTarget } from '../kube/event-recorder.ts';
import { compileLabelSelector, type LabelMatcher } from '../kube/label-selector.ts';
import { LeasePauseRecord } from '../kube/lease-pause-record.ts';
import type { PauseRecord } from '../pause/pause-state.ts';
import { ResilientInformer } from '../kube/resilient-informer.ts';
import {
  Annotations,
  type DesiredState,
  type DesiredValidator,
  type ValidatorId,
} from '../model.ts';
import { computeDesiredState, DiscoveryMemory } from './desired-state.ts';
import { createIdMapper, ordinalOf, type IdMapper } from './id-mapping.ts';
import { leanPod } from './lean-pod.ts';
import { keySetOfSecret } from './secret-keys.ts';
import {
  type DiscoveryDeps,
  type DiscoveryListener,
  type DiscoveryMode,
  type KeySet,
  type DiscoverySource,
  type PodRef,
  type SourceStatus,
} from './port.ts';

/** A StatefulSet read directly stands in for the cache's copy at most this long. */
const FRESH_READ_TTL_MS = 30_000;

export interface KubernetesDiscoveryOptions extends DiscoveryDeps {
  config: Config;
  kube: KubeClients;
}

export class KubernetesDiscovery implements DiscoverySource {
  readonly mode: DiscoveryMode = 'kubernetes';
  readonly kube: KubeClients;
  readonly events: EventRecorder;
  readonly #o: KubernetesDiscoveryOptions;
  readonly #pods: ResilientInformer<V1Pod>;
  readonly #statefulSets: ResilientInformer<V1StatefulSet>;
  readonly #secret: ResilientInformer<V1Secret>;
  readonly #memory = new DiscoveryMemory();
  readonly #mapper: IdMapper;
  readonly #isValidatorTemplate: LabelMatcher;
  #listener: DiscoveryListener | undefined;
  #stopping = false;
  /**
   * StatefulSets read from the API server directly (undefined: gone), standing in for the cache's
   * copy until the informer has caught up: a scale-down seen on a terminating pod is acted on at
   * once, not when a lagging informer delivers it.
   */
  readonly #freshSets = new Map<string, { sts: V1StatefulSet | undefined; at: number }>();
  readonly #confirming = new Map<string, Promise<void>>();
  #keySet: { secret: V1Secret; set: KeySet } | undefined;

  constructor(options: KubernetesDiscoveryOptions) {
    this.#o = options;
    const { config, kube, logger } = options;
    this.kube = kube;
    this.#mapper = createIdMapper(config, options.ids);
    this.#isValidatorTemplate = compileLabelSelector(config.podSelector);
    this.events = new EventRecorder({
      core: kube.core,
      component: 'cluster-manager',
      instance: config.identity,
      logger: logger.child({ component: 'events' }),
      clock: options.clock,
    });
    const ns = kube.namespace;
    const common = {
      watch: kube.watch,
      logger: logger.child({ component: 'informer' }),
      clock: options.clock,
      onRestart: (name: string) => options.metrics.informerRestarts.inc({ informer: name }),
    };
    this.#pods = new ResilientInformer<V1Pod>({
      ...common,
      name: 'pods',
      path: `/api/v1/namespaces/${ns}/pods`,
      labelSelector: config.podSelector,
      list: () => kube.core.listNamespacedPod({ namespace: ns, labelSelector: config.podSelector }),
      lean: leanPod,
      onChange: (pod) => {
        this.#listener?.desiredChanged();
        if (pod !== undefined) this.#confirmIfLeaving(pod);
      },
    });
    this.#statefulSets = new ResilientInformer<V1StatefulSet>({
      ...common,
      name: 'statefulsets',
      path: `/apis/apps/v1/namespaces/${ns}/statefulsets`,
      list: () => kube.apps.listNamespacedStatefulSet({ namespace: ns }),
      onChange: () => this.#listener?.desiredChanged(),
    });
    const secretField = `metadata.name=${config.keysSecret}`;
    this.#secret = new ResilientInformer<V1Secret>({
      ...common,
      name: 'secret',
      path: `/api/v1/namespaces/${ns}/secrets`,
      fieldSelector: secretField,
      list: () => kube.core.listNamespacedSecret({ namespace: ns, fieldSelector: secretField }),
      onChange: () => this.#listener?.keysChanged(),
    });
  }

  get keysLabel(): string {
    return `Secret ${this.#o.config.keysSecret}`;
  }

  async start(listener: DiscoveryListener): Promise<void> {
    this.#listener = listener;
    await Promise.all([this.#pods.start(), this.#statefulSets.start(), this.#secret.start()]);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all([this.#pods.stop(), this.#statefulSets.stop(), this.#secret.stop()]);
  }

  /** The pod and StatefulSet informers have listed once (before that, no layout is known). */
  get layoutSynced(): boolean {
    return this.#pods.synced && this.#statefulSets.synced;
  }

  get synced(): boolean {
    return this.#pods.synced && this.#statefulSets.synced && this.#secret.synced;
  }

  computeDesired(now: number): DesiredState {
    return computeDesiredState(
      {
        namespace: this.kube.namespace,
        statefulSets: this.#effectiveStatefulSets(),
        pods: this.#pods.list(),
        isValidatorTemplate: this.#isValidatorTemplate,
        mapper: this.#mapper,
        serviceUrlTemplate: this.#o.config.serviceUrlTemplate,
        nodeRpcPortName: this.#o.config.nodeRpcPortName,
        now,
      },
      this.#memory,
    );
  }

  keys(): KeySet | undefined {
    const secret = this.#secret.list()[0];
    if (secret === undefined) return undefined;
    // Decoded once per version of the Secret (the intake reads it on every change).
    if (this.#keySet?.secret !== secret) this.#keySet = { secret, set: keySetOfSecret(secret) };
    return this.#keySet.set;
  }

  keysTarget(): EventTarget | undefined {
    const uid = this.#secret.list()[0]?.metadata?.uid;
    if (uid === undefined) return undefined;
    return {
      kind: 'Secret',
      apiVersion: 'v1',
      name: this.#o.config.keysSecret,
      namespace: this.kube.namespace,
      uid,
    };
  }

  eventTarget(_id: ValidatorId, entry: DesiredValidator | undefined): EventTarget | undefined {
    if (entry?.pod !== undefined) {
      return {
        kind: 'Pod',
        apiVersion: 'v1',
        name: entry.pod.name,
        namespace: entry.pod.namespace,
        uid: entry.pod.uid,
      };
    }
    if (entry?.statefulSet !== undefined) {
      const sts = entry.statefulSet;
      return {
        kind: 'StatefulSet',
        apiVersion: 'apps/v1',
        name: sts.name,
        namespace: sts.namespace,
        uid: sts.uid,
      };
    }
    return undefined;
  }

  chainTargets(): EventTarget[] {
    const out: EventTarget[] = [];
    for (const sts of this.statefulSets()) {
      const meta = sts.metadata;
      if (meta?.uid === undefined || meta.name === undefined) continue;
      out.push({
        kind: 'StatefulSet',
        apiVersion: 'apps/v1',
        name: meta.name,
        namespace: meta.namespace ?? this.kube.namespace,
        uid: meta.uid,
      });
    }
    return out;
  }

  /** The lowest minimum set recorded by a forced scale on a validator StatefulSet. */
  forcedMinimumSet(): number | undefined {
    let forced: number | undefined;
    for (const sts of this.statefulSets()) {
      const raw = sts.metadata?.annotations?.[Annotations.minimumSet];
      if (raw !== undefined && /^\d+$/.test(raw))
        forced = Math.min(forced ?? Number.POSITIVE_INFINITY, Number(raw));
    }
    return forced;
  }

  /** The scaler decides (it scales exactly one validator StatefulSet). */
  scaleUnsupported(): undefined {
    return undefined;
  }

  status(): SourceStatus[] {
    return [this.#pods, this.#statefulSets, this.#secret].map((i) => ({
      name: i.name,
      synced: i.synced,
      restarts: i.restarts,
      lastError: i.lastError,
    }));
  }

  describe(): Record<string, unknown> {
    return {
      discovery: this.mode,
      namespace: this.kube.namespace,
      server: this.kube.server,
      source: this.kube.source,
      pods: this.#pods.list().length,
      statefulSets: this.#statefulSets.list().length,
    };
  }

  /**
   * Deletes the pod with the uid as a precondition, so a replacement its StatefulSet already made
   * is never deleted in its place; its grace period and preStop hook run as for any delete.
   */
  async restartPod(pod: PodRef): Promise<'deleted' | 'gone' | 'forbidden'> {
    try {
      await this.kube.core.deleteNamespacedPod({
        name: pod.name,
        namespace: pod.namespace,
        body: { preconditions: { uid: pod.uid } },
      });
      return 'deleted';
    } catch (error: unknown) {
      const status = apiStatus(error);
      // 404: gone; 409: the precondition failed, another pod (uid) has the name now.
      if (status === 404 || status === 409) return 'gone';
      // 403: the Role lacks delete on pods; retrying cannot help (the caller reports it once).
      if (status === 403) return 'forbidden';
      throw kubeFailure(`could not delete pod ${pod.name}`, error);
    }
  }

  /** The pause on the Lease (CM_LEASE_NAME), whether or not leader election is on. */
  pauseRecord(): PauseRecord {
    const { config } = this.#o;
    return new LeasePauseRecord({
      coordination: this.kube.coordination,
      namespace: this.kube.namespace,
      name: config.leaseName,
      identity: config.identity,
      election: config.leaderElection,
    });
  }

  /**
   * The id of the pod a StatefulSet would create at `ordinal`, when the id mapping can tell it
   * from the pod's name alone (undefined otherwise: annotation mapping, or no id).
   */
  idOfNewPod(statefulSet: string, ordinal: number): ValidatorId | undefined {
    if (!this.#mapper.derivableFromName) return undefined;
    const result = this.#mapper.idOf({
      name: `${statefulSet}-${ordinal}`,
      ordinal,
      annotations: undefined,
    });
    return 'id' in result ? result.id : undefined;
  }

  /** True when the manager's pod selector selects this pod. */
  selectsPod(pod: V1Pod): boolean {
    return this.#isValidatorTemplate(pod.metadata?.labels);
  }

  pods(): readonly V1Pod[] {
    return this.#pods.list();
  }

  /** The validator StatefulSets currently known (a direct read stands in for a lagging cache). */
  statefulSets(): readonly V1StatefulSet[] {
    return this.#effectiveStatefulSets().filter((sts) =>
      this.#isValidatorTemplate(sts.spec?.template.metadata?.labels),
    );
  }

  /**
   * Reads a StatefulSet from the API server now and lets that copy stand in for the cache's until
   * the informer catches up (a 404 stands for "gone"). Concurrent calls share one read.
   */
  async confirmStatefulSet(name: string): Promise<void> {
    const running = this.#confirming.get(name);
    if (running !== undefined) return running;
    const { clock, logger } = this.#o;
    const read = (async () => {
      try {
        const sts = await this.kube.apps.readNamespacedStatefulSet({
          name,
          namespace: this.kube.namespace,
        });
        this.#freshSets.set(name, { sts, at: clock.now() });
      } catch (error: unknown) {
        if (apiStatus(error) === 404)
          this.#freshSets.set(name, { sts: undefined, at: clock.now() });
        else logger.debug({ statefulSet: name, err: error }, 'direct read failed');
        return;
      } finally {
        this.#confirming.delete(name);
      }
      if (!this.#stopping) this.#listener?.desiredChangedNow();
    })();
    this.#confirming.set(name, read);
    return read;
  }

  /** A terminating pod whose ordinal the cache still wants: is the StatefulSet scaled down? */
  #confirmIfLeaving(pod: V1Pod): void {
    if (pod.metadata?.deletionTimestamp === undefined) return;
    const owner = pod.metadata.ownerReferences?.find(
      (ref) => ref.controller === true && ref.kind === 'StatefulSet',
    )?.name;
    if (owner === undefined) return;
    const sts = this.statefulSets().find((s) => s.metadata?.name === owner);
    const ordinal = ordinalOf(pod.metadata.name ?? '', owner);
    if (sts === undefined || ordinal === undefined || ordinal >= (sts.spec?.replicas ?? 1)) return;
    void this.confirmStatefulSet(owner);
  }

  /** The informer's StatefulSets, with newer direct reads in their place. */
  #effectiveStatefulSets(): V1StatefulSet[] {
    const cached = this.#statefulSets.list();
    if (this.#freshSets.size === 0) return [...cached];
    const now = this.#o.clock.now();
    const out: V1StatefulSet[] = [];
    for (const sts of cached) {
      const name = sts.metadata?.name ?? '';
      const fresh = this.#freshSets.get(name);
      if (fresh === undefined) {
        out.push(sts);
        continue;
      }
      const newer =
        now - fresh.at < FRESH_READ_TTL_MS &&
        (fresh.sts === undefined || isNewerVersion(fresh.sts, sts));
      if (!newer) {
        this.#freshSets.delete(name); // the informer has caught up (or the read is too old)
        out.push(sts);
      } else if (fresh.sts !== undefined) out.push(fresh.sts);
    }
    for (const name of this.#freshSets.keys())
      if (!cached.some((sts) => sts.metadata?.name === name)) this.#freshSets.delete(name);
    return out;
  }
}

/**
 * True when `a` is a newer version of the object than `b`. resourceVersions are opaque, but both
 * etcd's and the emulator's are increasing integers; anything else counts as newer when different.
 */
function isNewerVersion(a: V1StatefulSet, b: V1StatefulSet): boolean {
  const ra = a.metadata?.resourceVersion ?? '';
  const rb = b.metadata?.resourceVersion ?? '';
  if (/^\d+$/.test(ra) && /^\d+$/.test(rb)) return BigInt(ra) > BigInt(rb);
  return ra !== rb;
}
