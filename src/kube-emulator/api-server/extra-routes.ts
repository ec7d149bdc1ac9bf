// The requests that are not plain CRUD on a stored kind: pod subresources (log; exec, attach and
// portforward without an upgrade), and the kinds that are computed on create and never stored.
// The HTTP front asks `extraRoute` first and falls back to the generic resource handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator, Identity, Impersonation } from '../auth/auth.ts';
import type { ContainerLogs } from '../kubelets/container-logs.ts';
import { servePodLog } from '../streams/pod-log.ts';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
} from '../auth/reviews.ts';
import { tokenRequest } from '../auth/token-request.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { ResourceRoute } from './routes.ts';
import { ApiError, badRequest, methodNotAllowed, unsupportedMediaType } from '../status-errors.ts';
import { podInfo } from '../kinds.ts';
import { evictPod } from './pod-eviction.ts';

export interface ExtraRouteContext {
  api: ResourceApi;
  auth: Authenticator;
  logs: ContainerLogs;
  /**
   * Decodes a protobuf body (`application/vnd.kubernetes.protobuf`, which kubectl 1.32+ sends
   * for `auth can-i` and `create token`) into its JSON form; without it such a body is 415.
   */
  decodeProtobuf?: (body: Buffer) => unknown;
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

/** The `Impersonate-User` and `Impersonate-Group` headers of a request (`kubectl --as`). */
export function impersonationOf(request: IncomingMessage): Impersonation {
  const groups = request.headers['impersonate-group'];
  return {
    user: request.headers['impersonate-user'] as string | undefined,
    groups: groups === undefined ? [] : Array.isArray(groups) ? groups : [groups],
  };
}

/** The pod subresources that need a connection upgrade (SPDY or WebSocket). */
export const STREAMING_SUBRESOURCES: readonly string[] = ['exec', 'attach', 'portforward'];

/** The handler for a route this file serves, or undefined for the generic resource handler. */
export function extraRoute(
  context: ExtraRouteContext,
  route: ResourceRoute,
): ExtraHandler | undefined {
  const { info, subresource } = route;
  const review = reviews[`${info.group}/${info.resource}`];
  if (review !== undefined && subresource === undefined) {
    return async ({ request, identity }) => {
      if (request.method !== 'POST') throw methodNotAllowed();
      const body = await requestObject(context, request);
      return { status: 201, body: review(context, identity, body) };
    };
  }
  if (info.resource === 'serviceaccounts' && info.group === '' && subresource === 'token') {
    return async ({ request, identity }) => {
      const namespace = route.namespace ?? '';
      const name = route.name ?? '';
      context.auth.authorize(identity, { verb: 'create', info, subresource, namespace, name });
      if (request.method !== 'POST') throw methodNotAllowed();
      const body = await requestObject(context, request);
      return {
        status: 201,
        body: tokenRequest({ api: context.api, tokens: context.auth.bound, namespace, name, body }),
      };
    };
  }
  if (info === podInfo && route.name !== undefined && subresource !== undefined) {
    if (subresource === 'log') return (request) => podLog(context, request);
    if (subresource === 'eviction') return (request) => eviction(context, request);
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

type Review = (context: ExtraRouteContext, identity: Identity, body: unknown) => unknown;

/** The kinds computed on create (every authenticated user may create them: system:basic-user). */
const reviews: Readonly<Record<string, Review>> = {
  'authorization.k8s.io/selfsubjectaccessreviews': (context, identity, body) =>
    selfSubjectAccessReview(context.auth, identity, body),
  'authorization.k8s.io/selfsubjectrulesreviews': (context, identity, body) =>
    selfSubjectRulesReview(context.auth, identity, body),
  'authentication.k8s.io/selfsubjectreviews': (_context, identity) => selfSubjectReview(identity),
};

/** The apiserver's limit on request bodies (--max-request-body-bytes, 3 MiB). */
const MAX_BODY = 3 * 1024 * 1024;

async function readBytes(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      throw new ApiError({
        code: 413,
        reason: 'RequestEntityTooLarge',
        message: `Request entity too large: limit is ${MAX_BODY}`,
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** The object a create request carries, from JSON or (when a decoder is wired) protobuf. */
async function requestObject(
  context: ExtraRouteContext,
  request: IncomingMessage,
): Promise<unknown> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = [
    'application/json',
    ...(context.decodeProtobuf === undefined ? [] : [PROTOBUF]),
  ];
  if (type !== '' && !accepted.includes(type)) throw unsupportedMediaType(type, accepted);
  const bytes = await readBytes(request);
  try {
    if (type === PROTOBUF && context.decodeProtobuf !== undefined)
      return context.decodeProtobuf(bytes);
    const text = bytes.toString('utf8');
    return text.trim() === '' ? {} : (JSON.parse(text) as unknown);
  } catch (error: unknown) {
    if (error instanceof ApiError) throw error;
    throw badRequest(
      `the body of the request could not be decoded: ${error instanceof Error ? error.message : 'invalid'}`,
    );
  }
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

/** POST pods/<name>/eviction (pod-eviction.ts), authorized as `create` on `pods/eviction`. */
async function eviction(context: ExtraRouteContext, request: ExtraRequest): Promise<ExtraReply> {
  const { route, identity } = request;
  const namespace = route.namespace ?? '';
  const name = route.name ?? '';
  context.auth.authorize(identity, {
    verb: 'create',
    info: route.info,
    subresource: 'eviction',
    namespace,
    name,
  });
  if (request.request.method !== 'POST') throw methodNotAllowed();
  const body = await requestObject(context, request.request);
  const url = new URL(request.request.url ?? '/', 'http://localhost');
  const dryRun = url.searchParams.getAll('dryRun').includes('All');
  return evictPod({ api: context.api, namespace, name, body, dryRun });
}
