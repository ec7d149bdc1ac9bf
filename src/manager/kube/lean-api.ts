// The Kubernetes API calls the manager makes, through client-node's generated request factories
// and response processors, without client-node's `CoreV1Api`-style classes: those live in two
// files that hold every API group of Kubernetes (14 MiB of source kept in memory; ADR 0019).
// Each method takes the object parameter of client-node's own class and sends the same request.
import type { AppsV1Api, CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  AppsV1ApiRequestFactory,
  AppsV1ApiResponseProcessor,
} from '@kubernetes/client-node/dist/gen/apis/AppsV1Api.js';
import {
  CoordinationV1ApiRequestFactory,
  CoordinationV1ApiResponseProcessor,
} from '@kubernetes/client-node/dist/gen/apis/CoordinationV1Api.js';
import {
  CoreV1ApiRequestFactory,
  CoreV1ApiResponseProcessor,
} from '@kubernetes/client-node/dist/gen/apis/CoreV1Api.js';
import {
  mergeConfiguration,
  type Configuration,
  type ConfigurationOptions,
} from '@kubernetes/client-node/dist/gen/configuration.js';
import type {
  HttpInfo,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node/dist/gen/http/http.js';

/** The CoreV1 calls the manager makes (a full `CoreV1Api` also fits, e.g. in tests). */
export type CoreApi = Pick<
  CoreV1Api,
  | 'listNamespacedPod'
  | 'listNamespacedSecret'
  | 'readNamespacedPod'
  | 'patchNamespacedPod'
  | 'deleteNamespacedPod'
  | 'createNamespacedEvent'
  | 'patchNamespacedEvent'
>;
/** The AppsV1 calls the manager makes. */
export type AppsApi = Pick<
  AppsV1Api,
  | 'listNamespacedStatefulSet'
  | 'readNamespacedStatefulSet'
  | 'patchNamespacedStatefulSet'
  | 'patchNamespacedStatefulSetScale'
>;
/** The CoordinationV1 calls the manager makes (leader election). */
export type CoordinationApi = Pick<
  CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

type Options = ConfigurationOptions | undefined;
type Param<A, M extends keyof A> = A[M] extends (param: infer P, ...rest: never[]) => unknown
  ? P
  : never;
type Result<A, M extends keyof A> = A[M] extends (...args: never[]) => infer R ? R : never;

/**
 * One request as client-node's Observable API sends it: the configuration merged with the call's
 * options, the middleware's `pre` in order, the HTTP library, the middleware's `post` in reverse,
 * then the generated processor (which throws `ApiException` for an error status).
 */
async function send<T>(
  configuration: Configuration,
  options: Options,
  build: (config: Configuration) => Promise<RequestContext>,
  parse: (response: ResponseContext) => Promise<HttpInfo<T>>,
): Promise<T> {
  const config = mergeConfiguration(configuration, options);
  let request = await build(config);
  for (const middleware of config.middleware) request = await middleware.pre(request).toPromise();
  let response = await config.httpApi.send(request).toPromise();
  for (const middleware of [...config.middleware].reverse())
    response = await middleware.post(response).toPromise();
  return (await parse(response)).data;
}

/**
 * A namespaced list's parameters in the generated factories' positional order, which is the same
 * for every kind (client-node's `ObjectCoreV1Api.listNamespacedPod`, `…StatefulSet`, …).
 */
function listArgs(p: Param<CoreApi, 'listNamespacedPod'>) {
  return [
    p.namespace,
    p.pretty,
    p.allowWatchBookmarks,
    p._continue,
    p.fieldSelector,
    p.labelSelector,
    p.limit,
    p.resourceVersion,
    p.resourceVersionMatch,
    p.sendInitialEvents,
    p.shardSelector,
    p.timeoutSeconds,
    p.watch,
  ] as const;
}

/** A namespaced patch's parameters in the generated factories' order, the same for every kind. */
function patchArgs(p: Param<CoreApi, 'patchNamespacedPod'>) {
  return [
    p.name,
    p.namespace,
    p.body,
    p.pretty,
    p.dryRun,
    p.fieldManager,
    p.fieldValidation,
    p.force,
  ] as const;
}

type CoreP<M extends keyof CoreApi> = Param<CoreApi, M>;
type CoreR<M extends keyof CoreApi> = Result<CoreApi, M>;

/** CoreV1: the parameters go to the factory in the order of client-node's ObjectCoreV1Api. */
class LeanCoreV1Api implements CoreApi {
  readonly #config: Configuration;
  readonly #factory: CoreV1ApiRequestFactory;
  readonly #processor = new CoreV1ApiResponseProcessor();

  constructor(configuration: Configuration) {
    this.#config = configuration;
    this.#factory = new CoreV1ApiRequestFactory(configuration);
  }

  listNamespacedPod(p: CoreP<'listNamespacedPod'>, options?: Options): CoreR<'listNamespacedPod'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.listNamespacedPod(...listArgs(p), c),
      (r) => this.#processor.listNamespacedPodWithHttpInfo(r),
    );
  }

  listNamespacedSecret(
    p: CoreP<'listNamespacedSecret'>,
    options?: Options,
  ): CoreR<'listNamespacedSecret'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.listNamespacedSecret(...listArgs(p), c),
      (r) => this.#processor.listNamespacedSecretWithHttpInfo(r),
    );
  }

  readNamespacedPod(p: CoreP<'readNamespacedPod'>, options?: Options): CoreR<'readNamespacedPod'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.readNamespacedPod(p.name, p.namespace, p.pretty, c),
      (r) => this.#processor.readNamespacedPodWithHttpInfo(r),
    );
  }

  patchNamespacedPod(
    p: CoreP<'patchNamespacedPod'>,
    options?: Options,
  ): CoreR<'patchNamespacedPod'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.patchNamespacedPod(...patchArgs(p), c),
      (r) => this.#processor.patchNamespacedPodWithHttpInfo(r),
    );
  }

  deleteNamespacedPod(
    p: CoreP<'deleteNamespacedPod'>,
    options?: Options,
  ): CoreR<'deleteNamespacedPod'> {
    return send(
      this.#config,
      options,
      (c) =>
        this.#factory.deleteNamespacedPod(
          p.name,
          p.namespace,
          p.pretty,
          p.dryRun,
          p.gracePeriodSeconds,
          p.ignoreStoreReadErrorWithClusterBreakingPotential,
          p.orphanDependents,
          p.propagationPolicy,
          p.body,
          c,
        ),
      (r) => this.#processor.deleteNamespacedPodWithHttpInfo(r),
    );
  }

  createNamespacedEvent(
    p: CoreP<'createNamespacedEvent'>,
    options?: Options,
  ): CoreR<'createNamespacedEvent'> {
    return send(
      this.#config,
      options,
      (c) =>
        this.#factory.createNamespacedEvent(
          p.namespace,
          p.body,
          p.pretty,
          p.dryRun,
          p.fieldManager,
          p.fieldValidation,
          c,
        ),
      (r) => this.#processor.createNamespacedEventWithHttpInfo(r),
    );
  }

  patchNamespacedEvent(
    p: CoreP<'patchNamespacedEvent'>,
    options?: Options,
  ): CoreR<'patchNamespacedEvent'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.patchNamespacedEvent(...patchArgs(p), c),
      (r) => this.#processor.patchNamespacedEventWithHttpInfo(r),
    );
  }
}

type AppsP<M extends keyof AppsApi> = Param<AppsApi, M>;
type AppsR<M extends keyof AppsApi> = Result<AppsApi, M>;

/** AppsV1, in the parameter order of client-node's ObjectAppsV1Api. */
class LeanAppsV1Api implements AppsApi {
  readonly #config: Configuration;
  readonly #factory: AppsV1ApiRequestFactory;
  readonly #processor = new AppsV1ApiResponseProcessor();

  constructor(configuration: Configuration) {
    this.#config = configuration;
    this.#factory = new AppsV1ApiRequestFactory(configuration);
  }

  listNamespacedStatefulSet(
    p: AppsP<'listNamespacedStatefulSet'>,
    options?: Options,
  ): AppsR<'listNamespacedStatefulSet'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.listNamespacedStatefulSet(...listArgs(p), c),
      (r) => this.#processor.listNamespacedStatefulSetWithHttpInfo(r),
    );
  }

  readNamespacedStatefulSet(
    p: AppsP<'readNamespacedStatefulSet'>,
    options?: Options,
  ): AppsR<'readNamespacedStatefulSet'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.readNamespacedStatefulSet(p.name, p.namespace, p.pretty, c),
      (r) => this.#processor.readNamespacedStatefulSetWithHttpInfo(r),
    );
  }

  patchNamespacedStatefulSet(
    p: AppsP<'patchNamespacedStatefulSet'>,
    options?: Options,
  ): AppsR<'patchNamespacedStatefulSet'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.patchNamespacedStatefulSet(...patchArgs(p), c),
      (r) => this.#processor.patchNamespacedStatefulSetWithHttpInfo(r),
    );
  }

  patchNamespacedStatefulSetScale(
    p: AppsP<'patchNamespacedStatefulSetScale'>,
    options?: Options,
  ): AppsR<'patchNamespacedStatefulSetScale'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.patchNamespacedStatefulSetScale(...patchArgs(p), c),
      (r) => this.#processor.patchNamespacedStatefulSetScaleWithHttpInfo(r),
    );
  }
}

type CoordP<M extends keyof CoordinationApi> = Param<CoordinationApi, M>;
type CoordR<M extends keyof CoordinationApi> = Result<CoordinationApi, M>;

/** CoordinationV1, in the parameter order of client-node's ObjectCoordinationV1Api. */
class LeanCoordinationV1Api implements CoordinationApi {
  readonly #config: Configuration;
  readonly #factory: CoordinationV1ApiRequestFactory;
  readonly #processor = new CoordinationV1ApiResponseProcessor();

  constructor(configuration: Configuration) {
    this.#config = configuration;
    this.#factory = new CoordinationV1ApiRequestFactory(configuration);
  }

  readNamespacedLease(
    p: CoordP<'readNamespacedLease'>,
    options?: Options,
  ): CoordR<'readNamespacedLease'> {
    return send(
      this.#config,
      options,
      (c) => this.#factory.readNamespacedLease(p.name, p.namespace, p.pretty, c),
      (r) => this.#processor.readNamespacedLeaseWithHttpInfo(r),
    );
  }

  createNamespacedLease(
    p: CoordP<'createNamespacedLease'>,
    options?: Options,
  ): CoordR<'createNamespacedLease'> {
    return send(
      this.#config,
      options,
      (c) =>
        this.#factory.createNamespacedLease(
          p.namespace,
          p.body,
          p.pretty,
          p.dryRun,
          p.fieldManager,
          p.fieldValidation,
          c,
        ),
      (r) => this.#processor.createNamespacedLeaseWithHttpInfo(r),
    );
  }

  replaceNamespacedLease(
    p: CoordP<'replaceNamespacedLease'>,
    options?: Options,
  ): CoordR<'replaceNamespacedLease'> {
    return send(
      this.#config,
      options,
      (c) =>
        this.#factory.replaceNamespacedLease(
          p.name,
          p.namespace,
          p.body,
          p.pretty,
          p.dryRun,
          p.fieldManager,
          p.fieldValidation,
          c,
        ),
      (r) => this.#processor.replaceNamespacedLeaseWithHttpInfo(r),
    );
  }
}

/** The manager's API clients, configured by `kubeConfig` as its `makeApiClient` would. */
export function makeLeanApis(kubeConfig: KubeConfig): {
  core: CoreApi;
  apps: AppsApi;
  coordination: CoordinationApi;
} {
  return {
    core: kubeConfig.makeApiClient(LeanCoreV1Api),
    apps: kubeConfig.makeApiClient(LeanAppsV1Api),
    coordination: kubeConfig.makeApiClient(LeanCoordinationV1Api),
  };
}
