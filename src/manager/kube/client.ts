// Kubernetes access through @kubernetes/client-node: in-cluster config when running in a pod,
// else KUBECONFIG; the namespace resolved once.
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
// Deep imports, not the package's index: the index loads every API group (lean-client-node.ts).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { Watch } from '@kubernetes/client-node/dist/watch.js';
import { ManagerError } from '../errors.ts';
import { makeLeanApis, type AppsApi, type CoordinationApi, type CoreApi } from './lean-api.ts';

export interface KubeClients {
  readonly kubeConfig: KubeConfig;
  readonly core: CoreApi;
  readonly apps: AppsApi;
  readonly coordination: CoordinationApi;
  readonly watch: Watch;
  readonly namespace: string;
  /** Where the configuration came from, for the start-up log. */
  readonly source: 'in-cluster' | 'kubeconfig';
  readonly server: string;
}

const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface LoadKubeOptions {
  /** Namespace from configuration; wins over the kubeconfig's. */
  namespace: string | undefined;
  env: NodeJS.ProcessEnv;
  /** A ready KubeConfig (tests); otherwise in-cluster, else `env.KUBECONFIG`, else ~/.kube/config. */
  kubeConfig?: KubeConfig;
}

/** Builds the API clients. In a pod (service-account token present) it uses the in-cluster path. */
export function loadKubeClients(options: LoadKubeOptions): KubeClients {
  let kubeConfig = options.kubeConfig;
  let source: KubeClients['source'] = 'kubeconfig';
  if (kubeConfig === undefined) {
    kubeConfig = new KubeConfig();
    const inCluster = options.env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(TOKEN_PATH);
    try {
      const files = (options.env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
      if (inCluster) {
        kubeConfig.loadFromCluster();
        source = 'in-cluster';
      } else if (files.length > 0) {
        // KUBECONFIG of the env given (not process.env, which loadFromDefault would read).
        kubeConfig.loadFromFile(files[0] ?? '');
        for (const file of files.slice(1)) {
          const more = new KubeConfig();
          more.loadFromFile(file);
          kubeConfig.mergeConfig(more);
        }
      } else {
        kubeConfig.loadFromDefault();
      }
    } catch (error: unknown) {
      throw new ManagerError(
        'CONFIG_INVALID',
        `cannot load the Kubernetes configuration (${String(error)})`,
        { cause: error },
      );
    }
  }
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  const namespace =
    options.namespace ?? context?.namespace ?? options.env.KUBERNETES_NAMESPACE ?? 'default';
  const server = kubeConfig.getCurrentCluster()?.server ?? '(none)';
  return {
    kubeConfig,
    ...makeLeanApis(kubeConfig),
    watch: new Watch(kubeConfig),
    namespace,
    source,
    server,
  };
}

/** HTTP status of a client-node failure, when there is one. */
export function apiStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The Status body of a client-node failure, when it has one. */
function apiBody(error: unknown): { reason?: unknown; message?: unknown } | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body: unknown = error.body;
  try {
    const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as {
      reason?: unknown;
      message?: unknown;
    } | null;
    return parsed ?? undefined;
  } catch {
    return undefined;
  }
}

/** The Status `reason` of a client-node failure (e.g. "Conflict"), when the body has one. */
export function apiReason(error: unknown): string | undefined {
  const reason = apiBody(error)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** The RBAC rule a 403 says is missing, read from the apiserver's message. */
export interface MissingRule {
  verb: string;
  /** `pods`, or `statefulsets/scale` for a subresource. */
  resource: string;
  group: string;
}

/**
 * The rule a Forbidden message names: `User "…" cannot patch resource "statefulsets/scale" in
 * API group "apps" in the namespace "ns"` (the apiserver's forbiddenMessage,
 * endpoints/handlers/responsewriters/errors.go).
 */
export function missingRule(message: string): MissingRule | undefined {
  const match = / cannot (\S+) resource "([^"]+)" in API group "([^"]*)"/.exec(message);
  if (match === null) return undefined;
  return { verb: match[1] ?? '', resource: match[2] ?? '', group: match[3] ?? '' };
}

/** The apiserver's message of a 403, and the Role rule it lacks, in one line. */
function forbiddenText(error: unknown): string {
  const message = apiBody(error)?.message;
  const text = typeof message === 'string' && message !== '' ? message : 'HTTP 403 Forbidden';
  const rule = missingRule(text);
  return rule === undefined
    ? text
    : `${text} (the Role needs a rule with apiGroups ["${rule.group}"], resources ["${rule.resource}"], verbs ["${rule.verb}"])`;
}

/** One line describing a Kubernetes API failure: its status and reason, or a 403's message. */
export function describeApiError(error: unknown): string {
  const status = apiStatus(error);
  if (status === 403) return `KUBE_FORBIDDEN: ${forbiddenText(error)}`;
  if (status !== undefined)
    return `HTTP ${status}${apiReason(error) === undefined ? '' : ` ${apiReason(error)}`}`;
  if (error instanceof Error)
    return error.cause instanceof Error
      ? `${error.message} (${error.cause.message})`
      : error.message;
  return String(error);
}

/**
 * The manager's error for a failed API call: `KUBE_FORBIDDEN` (not retryable: only a change of
 * the Role helps) naming the apiserver's message and the missing rule for a 403,
 * `KUBE_UNAVAILABLE` otherwise.
 */
export function kubeFailure(what: string, error: unknown): ManagerError {
  if (apiStatus(error) === 403) {
    const message = apiBody(error)?.message;
    const rule = typeof message === 'string' ? missingRule(message) : undefined;
    return new ManagerError('KUBE_FORBIDDEN', `${what}: ${forbiddenText(error)}`, {
      cause: error,
      ...(rule === undefined ? {} : { details: { ...rule } }),
    });
  }
  return new ManagerError('KUBE_UNAVAILABLE', `${what}: ${describeApiError(error)}`, {
    cause: error,
  });
}
