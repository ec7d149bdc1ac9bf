// `GET /api/v1/namespaces/<ns>/pods/<name>/log`: the apiserver's checks (pkg/registry/core/pod
// strategy.go `LogLocation`, validation `ValidatePodLogOptions`) and the kubelet's choice of
// container instance (pkg/kubelet/kubelet_pods.go `validateContainerLogStatus`), served from the
// kubelets' CRI log files (container-logs.ts), streamed as text/plain.
import type { ServerResponse } from 'node:http';
import { optionBool, optionInt } from './connect-params.ts';
import type { ContainerLogs } from '../kubelets/container-logs.ts';
import { isObject, objects, type JsonObject } from '../json.ts';
import type { ResourceApi } from '../resource-api.ts';
import { targetOf } from '../resource-api.ts';
import { badRequest, invalid, notFound, type StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { podInfo } from '../kinds.ts';

/** The container a pod subresource is about (`container=`), as `LogLocation` picks it. */
export function chooseContainer(pod: KubeObject, requested: string | null): string {
  const name = pod.metadata.name ?? '';
  const spec = isObject(pod.spec) ? pod.spec : {};
  const names = objects(spec.containers).map((c) => String(c.name));
  const initNames = objects(spec.initContainers).map((c) => String(c.name));
  if (requested === null || requested === '') {
    if (names.length === 1 && names[0] !== undefined) return names[0];
    if (names.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    let message = `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`;
    if (initNames.length > 0) message += ` or one of the init containers: [${initNames.join(' ')}]`;
    throw badRequest(message);
  }
  // podHasContainerWithName visits every container, ephemeral ones included
  // (podutil.AllContainers), so `kubectl logs POD -c debugger` reads a `kubectl debug` container.
  const ephemeralNames = objects(spec.ephemeralContainers).map((c) => String(c.name));
  if (![...names, ...initNames, ...ephemeralNames].includes(requested)) {
    throw badRequest(`container ${requested} is not valid for pod ${name}`);
  }
  return requested;
}

interface LogOptions {
  container: string | null;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines: number | undefined;
  limitBytes: number | undefined;
  since: number | undefined;
}

/** Parses and validates the PodLogOptions of the query (422 Invalid as the apiserver answers). */
function logOptions(query: URLSearchParams, podName: string, now: number): LogOptions {
  const sinceSeconds = optionInt(query, 'sinceSeconds');
  const sinceTimeText = query.get('sinceTime');
  const sinceTime = sinceTimeText === null ? undefined : Date.parse(sinceTimeText);
  if (sinceTime !== undefined && Number.isNaN(sinceTime)) {
    throw badRequest(
      `parsing time ${JSON.stringify(sinceTimeText)} as "2006-01-02T15:04:05Z07:00": cannot parse`,
    );
  }
  const options: LogOptions = {
    container: query.get('container'),
    follow: optionBool(query, 'follow'),
    previous: optionBool(query, 'previous'),
    timestamps: optionBool(query, 'timestamps'),
    tailLines: optionInt(query, 'tailLines'),
    limitBytes: optionInt(query, 'limitBytes'),
    since: sinceSeconds !== undefined ? now - sinceSeconds * 1000 : sinceTime,
  };
  const causes: StatusCause[] = [];
  const value = (field: string, amount: number, rule: string): void => {
    causes.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${amount}: ${rule}`,
    });
  };
  if (options.tailLines !== undefined && options.tailLines < 0)
    value('tailLines', options.tailLines, 'must be greater than or equal to 0');
  if (options.limitBytes !== undefined && options.limitBytes < 1)
    value('limitBytes', options.limitBytes, 'must be greater than 0');
  if (sinceSeconds !== undefined) {
    if (sinceSeconds < 1) value('sinceSeconds', sinceSeconds, 'must be greater than 0');
    if (sinceTime !== undefined) {
      causes.push({
        reason: 'FieldValueForbidden',
        field: '',
        message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
      });
    }
  }
  if (causes.length > 0) {
    throw invalid(
      { group: '', resource: 'podlogoptions', name: podName, kind: 'PodLogOptions' },
      causes,
    );
  }
  return options;
}

/** Which run of the container a log request reads, or the kubelet's refusal. */
export function logInstance(pod: KubeObject, container: string, previous: boolean): number {
  const podName = pod.metadata.name ?? '';
  const status = isObject(pod.status) ? pod.status : {};
  const found = [
    ...objects(status.containerStatuses),
    ...objects(status.initContainerStatuses),
    ...objects(status.ephemeralContainerStatuses),
  ].find((c) => c.name === container);
  if (found === undefined)
    throw badRequest(`container "${container}" in pod "${podName}" is not available`);
  const restarts = typeof found.restartCount === 'number' ? found.restartCount : 0;
  const state: JsonObject = isObject(found.state) ? found.state : {};
  const last: JsonObject = isObject(found.lastState) ? found.lastState : {};
  if (previous) {
    if (!isObject(last.terminated))
      throw badRequest(
        `previous terminated container "${container}" in pod "${podName}" not found`,
      );
    return restarts - 1;
  }
  if (isObject(state.running) || isObject(state.terminated)) return restarts;
  if (isObject(last.terminated)) return restarts - 1;
  const waiting =
    isObject(state.waiting) && typeof state.waiting.reason === 'string' ? state.waiting.reason : '';
  if (waiting === 'ErrImagePull')
    throw badRequest(
      `container "${container}" in pod "${podName}" is waiting to start: image can't be pulled`,
    );
  if (waiting === 'ImagePullBackOff')
    throw badRequest(
      `container "${container}" in pod "${podName}" is waiting to start: trying and failing to pull image`,
    );
  if (isObject(state.waiting))
    throw badRequest(
      `container "${container}" in pod "${podName}" is waiting to start: ${waiting}`,
    );
  throw badRequest(
    `container "${container}" in pod "${podName}" is waiting to start - no logs yet`,
  );
}

/**
 * Serves a pod log request on `response` (errors are thrown before anything is written). A pod
 * not yet bound to a node has an empty log, as the apiserver gives when there is no kubelet to
 * ask.
 */
export async function servePodLog(options: {
  api: ResourceApi;
  logs: ContainerLogs;
  namespace: string;
  name: string;
  query: URLSearchParams;
  response: ServerResponse;
}): Promise<void> {
  const { api, logs, namespace, name, query, response } = options;
  const pod = api.peek(podInfo, namespace, name);
  if (pod === undefined) throw notFound(targetOf(podInfo, name));
  const settings = logOptions(query, name, api.now());
  const container = chooseContainer(pod, settings.container);
  const spec = isObject(pod.spec) ? pod.spec : {};
  const bound = typeof spec.nodeName === 'string' && spec.nodeName !== '';
  const instance = bound ? logInstance(pod, container, settings.previous) : undefined;
  response.writeHead(200, {
    'Content-Type': 'text/plain',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  response.flushHeaders();
  if (instance === undefined || instance < 0) {
    response.end();
    return;
  }
  const closed = new AbortController();
  response.once('close', () => closed.abort());
  await logs.read(
    { namespace, pod: name, uid: pod.metadata.uid ?? '', container, instance },
    {
      timestamps: settings.timestamps,
      follow: settings.follow && !settings.previous,
      signal: closed.signal,
      ...(settings.tailLines === undefined ? {} : { tailLines: settings.tailLines }),
      ...(settings.limitBytes === undefined ? {} : { limitBytes: settings.limitBytes }),
      ...(settings.since === undefined ? {} : { since: settings.since }),
    },
    (text) => response.write(text),
  );
  response.end();
}
