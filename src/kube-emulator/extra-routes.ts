// The requests that are not plain CRUD on a stored kind: pod subresources (log; exec, attach and
// portforward without an upgrade), and the kinds that are computed on create and never stored.
// The HTTP front asks `extraRoute` first and falls back to the generic resource handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator, Identity } from './auth.ts';
import type { ContainerLogs } from './container-logs.ts';
import { podInfo } from './kubelet.ts';
import { servePodLog } from './pod-log.ts';
import type { ResourceApi } from './resource-api.ts';
import type { ResourceRoute } from './routes.ts';
import { badRequest, methodNotAllowed } from './status-errors.ts';

export interface ExtraRouteContext {
  api: ResourceApi;
  auth: Authenticator;
  logs: ContainerLogs;
}

export interface ExtraRequest {
  route: ResourceRoute;
  request: IncomingMessage;
  response: ServerResponse;
  identity: Identity;
}

/** What to answer (JSON), or undefined when the handler has written the response itself. */
export type ExtraReply = { status: number; body: unknown } | undefined;

export type ExtraHandler = (request: ExtraRequest) => Promise<ExtraReply>;

/** The pod subresources that need a connection upgrade (SPDY or WebSocket). */
export const STREAMING_SUBRESOURCES: readonly string[] = ['exec', 'attach', 'portforward'];

/** The handler for a route this file serves, or undefined for the generic resource handler. */
export function extraRoute(
  context: ExtraRouteContext,
  route: ResourceRoute,
): ExtraHandler | undefined {
  const { info, subresource } = route;
  if (info === podInfo && route.name !== undefined && subresource !== undefined) {
    if (subresource === 'log') return (request) => podLog(context, request);
    if (STREAMING_SUBRESOURCES.includes(subresource)) {
      return ({ request, identity }) => {
        context.auth.authorize(identity, {
          verb: 'create',
          info,
          subresource,
          namespace: route.namespace ?? '',
          name: route.name,
        });
        if (request.method !== 'GET' && request.method !== 'POST') throw methodNotAllowed();
        throw badRequest('Upgrade request required');
      };
    }
  }
  return undefined;
}

async function podLog(context: ExtraRouteContext, request: ExtraRequest): Promise<ExtraReply> {
  const { route, identity } = request;
  const namespace = route.namespace ?? '';
  const name = route.name ?? '';
  context.auth.authorize(identity, {
    verb: 'get',
    info: route.info,
    subresource: 'log',
    namespace,
    name,
  });
  if (request.request.method !== 'GET') throw methodNotAllowed();
  const url = new URL(request.request.url ?? '/', 'http://localhost');
  await servePodLog({
    api: context.api,
    logs: context.logs,
    namespace,
    name,
    query: url.searchParams,
    response: request.response,
  });
  return undefined;
}
