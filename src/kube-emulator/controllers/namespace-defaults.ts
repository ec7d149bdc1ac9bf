// What every namespace gets from the controller manager: the `default` ServiceAccount (the
// serviceaccounts-controller, pkg/controller/serviceaccount) and the `kube-root-ca.crt` ConfigMap
// with the cluster's CA (the root-ca-cert-publisher, pkg/controller/certificates/rootcacertpublisher),
// both put back when deleted, the ConfigMap's data put back when changed.
import type { Clock } from '../clock.ts';
import { clone, deepEqual, isObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { StoreEvent } from '../store.ts';
import { WorkQueue } from '../work-queue.ts';

const namespaces = kindOf('', 'namespaces');
const serviceAccounts = kindOf('', 'serviceaccounts');
const configMaps = kindOf('', 'configmaps');

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export class NamespaceDefaults {
  readonly #api: ResourceApi;
  readonly #caCert: string;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock; caCert: string }) {
    this.#api = options.api;
    this.#caCert = options.caCert;
    this.#queue = new WorkQueue({ handle: (ns) => this.#reconcile(ns), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => this.#observe(event));
    for (const ns of this.#api.store.list(namespaces.storage))
      this.#queue.add(ns.metadata.name ?? '');
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    if (event.storage === namespaces.storage) {
      if (event.type === 'ADDED') this.#queue.add(meta.name ?? '');
    } else if (
      (event.storage === serviceAccounts.storage &&
        meta.name === 'default' &&
        event.type === 'DELETED') ||
      (event.storage === configMaps.storage &&
        meta.name === ROOT_CA_CONFIGMAP &&
        event.type !== 'ADDED')
    ) {
      this.#queue.add(meta.namespace ?? '');
    }
  }

  #reconcile(namespace: string): void {
    const ns = this.#api.peek(namespaces, '', namespace);
    if (ns === undefined || ns.metadata.deletionTimestamp !== undefined) return;
    if (this.#api.peek(serviceAccounts, namespace, 'default') === undefined) {
      this.#api.create(serviceAccounts, namespace, { metadata: { name: 'default' } });
    }
    const data = { 'ca.crt': this.#caCert };
    const current = this.#api.peek(configMaps, namespace, ROOT_CA_CONFIGMAP);
    if (current === undefined) {
      this.#api.create(configMaps, namespace, {
        metadata: {
          name: ROOT_CA_CONFIGMAP,
          annotations: { 'kubernetes.io/description': DESCRIPTION },
        },
        data,
      });
    } else if (!deepEqual(current.data, data) && current.metadata.deletionTimestamp === undefined) {
      const next = clone(current);
      next.data = data;
      if (!isObject(next.metadata.annotations)) next.metadata.annotations = {};
      next.metadata.annotations['kubernetes.io/description'] = DESCRIPTION;
      this.#api.write(configMaps, next);
    }
  }
}
