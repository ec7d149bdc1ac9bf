// Serves one resource request (get, list, watch, create, replace, patch, delete) over HTTP.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { Authenticator, Identity } from './auth.ts';
import { isObject, type JsonObject } from './json.ts';
import { apiVersionOf } from './kinds.ts';
import { objectFilter } from './object-filter.ts';
import { Propagation, PatchType, type ResourceApi, type Subresource } from './resource-api.ts';
import type { ResourceRoute } from './routes.ts';
import { badRequest, expired, methodNotAllowed, routeNotFound } from './status-errors.ts';
import type { KubeObject } from './types.ts';
import type { WatchHub } from './watch-hub.ts';
import { toTable, wantsTable } from './table.ts';

export interface ResourceContext {
  api: ResourceApi;
  hub: WatchHub;
  auth: Authenticator;
}

export interface Reply {
  status: number;
  body: unknown;
}

const MAX_BODY = 16 * 1024 * 1024;

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY) throw badRequest('request body too large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a request body as JSON, or YAML when the Content-Type says so. */
function parseBody(text: string, contentType: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return contentType.includes('yaml') ? parseYaml(text) : JSON.parse(text);
  } catch (error: unknown) {
    throw badRequest(
      `the body of the request could not be decoded: ${error instanceof Error ? error.message : 'invalid'}`,
    );
  }
}

function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  return value === 'true' || value === '1';
}

function integer(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === '') return undefined;
  if (!/^-?\d+$/.test(value)) throw badRequest(`invalid ${name}: ${value}`);
  return Number(value);
}

function subresourceOf(route: ResourceRoute): Subresource {
  const sub = route.subresource;
  if (sub === undefined) return undefined;
  if ((sub === 'status' || sub === 'scale') && route.info.subresources.includes(sub)) return sub;
  throw routeNotFound(`${route.info.resource}/${sub}`);
}

interface ContinueToken {
  rv: string;
  after: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const token: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (isObject(token) && typeof token.rv === 'string' && typeof token.after === 'string') {
      return { rv: token.rv, after: token.after };
    }
  } catch {
    // fall through
  }
  throw badRequest(
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

function list(context: ResourceContext, route: ResourceRoute, query: URLSearchParams): Reply {
  const { api } = context;
  const { info } = route;
  const filter = objectFilter({
    info,
    namespace: route.namespace,
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
  });
  const limit = integer(query, 'limit');
  const token = query.get('continue');
  const start = token === null || token === '' ? undefined : decodeContinue(token);
  if (start !== undefined && Number(start.rv) < api.store.oldestResumableVersion) {
    throw expired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    );
  }
  const all = api.store
    .list(info.storage, route.namespace)
    .filter(
      (object) => filter.matches(object) && (start === undefined || keyOf(object) > start.after),
    );
  const rv = start?.rv ?? String(api.store.resourceVersion);
  const page = limit !== undefined && limit > 0 ? all.slice(0, limit) : all;
  const last = page.at(-1);
  const more = page.length < all.length && last !== undefined;
  return {
    status: 200,
    body: {
      kind: `${info.kind}List`,
      apiVersion: apiVersionOf(info),
      metadata: {
        resourceVersion: rv,
        ...(more
          ? {
              continue: encodeContinue({ rv, after: keyOf(last) }),
              remainingItemCount: all.length - page.length,
            }
          : {}),
      },
      items: page.map((object) => api.serve(info, object)),
    },
  };
}

function deleteOptions(body: unknown, query: URLSearchParams): JsonObject {
  const options: JsonObject = isObject(body) ? { ...body } : {};
  const policy = query.get('propagationPolicy');
  if (policy !== null) options.propagationPolicy = policy;
  const grace = integer(query, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  if (options.orphanDependents === true) options.propagationPolicy ??= Propagation.orphan;
  if (query.getAll('dryRun').length > 0) options.dryRun = ['All'];
  return options;
}

function remove(
  context: ResourceContext,
  route: ResourceRoute,
  body: unknown,
  query: URLSearchParams,
): Reply {
  const { api } = context;
  const { info } = route;
  const options = deleteOptions(body, query);
  const policy = options.propagationPolicy;
  if (policy !== undefined && !(Object.values(Propagation) as unknown[]).includes(policy)) {
    throw badRequest(`unsupported propagation policy: ${JSON.stringify(policy)}`);
  }
  const preconditions = isObject(options.preconditions) ? options.preconditions : {};
  const result = api.delete(info, route.namespace ?? '', route.name ?? '', {
    ...(typeof policy === 'string' ? { propagationPolicy: policy as Propagation } : {}),
    ...(typeof options.gracePeriodSeconds === 'number'
      ? { gracePeriodSeconds: options.gracePeriodSeconds }
      : {}),
    preconditions: {
      ...(typeof preconditions.uid === 'string' ? { uid: preconditions.uid } : {}),
      ...(typeof preconditions.resourceVersion === 'string'
        ? { resourceVersion: preconditions.resourceVersion }
        : {}),
    },
    dryRun: Array.isArray(options.dryRun),
  });
  if (!result.removed || info.resource === 'pods') return { status: 200, body: result.object };
  const meta = result.object.metadata;
  return {
    status: 200,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: meta.name,
        ...(info.group === '' ? {} : { group: info.group }),
        kind: info.resource,
        uid: meta.uid,
      },
    },
  };
}

function removeCollection(
  context: ResourceContext,
  route: ResourceRoute,
  body: unknown,
  query: URLSearchParams,
): Reply {
  const listed = list(context, route, query).body as { items: KubeObject[] };
  const deleted: unknown[] = [];
  for (const object of listed.items) {
    const reply = remove(
      context,
      { ...route, namespace: object.metadata.namespace, name: object.metadata.name },
      body,
      query,
    );
    deleted.push(reply.body);
  }
  return {
    status: 200,
    body: {
      kind: `${route.info.kind}List`,
      apiVersion: apiVersionOf(route.info),
      metadata: {},
      items: deleted,
    },
  };
}

/** The RBAC verb of a request. */
function verbOf(method: string, route: ResourceRoute, watching: boolean): string {
  switch (method) {
    case 'GET':
      if (watching) return 'watch';
      return route.name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return route.name === undefined ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

/**
 * The object a list or watch is limited to by `fieldSelector=metadata.name=<name>`: like a real
 * apiserver, RBAC then authorizes it against that name, so a Role with `resourceNames` can
 * allow an informer on one object (Kubernetes ≥ 1.x "list/watch by name").
 */
function singleNameOf(fieldSelector: string | null): string | undefined {
  const match = /^metadata\.name==?([^,=!]+)$/.exec(fieldSelector ?? '');
  return match?.[1];
}

/**
 * Handles a request to a resource path. Returns the reply, or undefined when it has answered
 * itself (a watch stream).
 */
export async function handleResource(options: {
  context: ResourceContext;
  route: ResourceRoute;
  request: IncomingMessage;
  response: ServerResponse;
  identity: Identity;
}): Promise<Reply | undefined> {
  const { context, route, request, response, identity } = options;
  const { api } = context;
  const url = new URL(request.url ?? '/', 'http://localhost');
  const query = url.searchParams;
  const method = request.method ?? 'GET';
  const watching = route.watchPath || flag(query, 'watch');
  const { info } = route;
  const namespace = route.namespace ?? '';
  context.auth.authorize(identity, {
    verb: verbOf(method, route, watching),
    info,
    subresource: route.subresource,
    namespace,
    name: route.name ?? singleNameOf(query.get('fieldSelector')),
  });
  const dryRun = query.getAll('dryRun').length > 0;
  const contentType = request.headers['content-type'] ?? '';
  const bodyText = method === 'GET' ? '' : await readBody(request);
  switch (method) {
    case 'GET': {
      if (watching) {
        const fieldSelector =
          query.get('fieldSelector') ??
          (route.name === undefined ? undefined : `metadata.name=${route.name}`);
        const filter = objectFilter({
          info,
          namespace: route.namespace,
          labelSelector: query.get('labelSelector') ?? undefined,
          fieldSelector,
        });
        if (
          flag(query, 'sendInitialEvents') &&
          query.get('resourceVersionMatch') !== 'NotOlderThan'
        ) {
          throw badRequest(
            'sendInitialEvents is only supported with resourceVersionMatch=NotOlderThan',
          );
        }
        const timeoutSeconds = integer(query, 'timeoutSeconds');
        context.hub.open(response, {
          info,
          filter,
          resourceVersion: query.get('resourceVersion') ?? undefined,
          allowBookmarks: flag(query, 'allowWatchBookmarks'),
          sendInitialEvents: flag(query, 'sendInitialEvents'),
          timeoutSeconds,
          table: wantsTable(request.headers.accept)
            ? { includeObject: query.get('includeObject') }
            : undefined,
        });
        return undefined;
      }
      const subresource = subresourceOf(route);
      const reply =
        route.name === undefined
          ? list(context, route, query)
          : { status: 200, body: api.get(info, namespace, route.name, subresource) };
      if (!wantsTable(request.headers.accept) || subresource !== undefined) return reply;
      const body = reply.body as { items?: KubeObject[]; metadata?: JsonObject };
      return {
        status: 200,
        body: toTable({
          info,
          objects: body.items ?? [reply.body as KubeObject],
          now: api.now(),
          includeObject: query.get('includeObject'),
          ...(body.items === undefined ? {} : { listMeta: body.metadata ?? {} }),
        }),
      };
    }
    case 'POST':
      if (route.name !== undefined) throw methodNotAllowed();
      if (info.namespaced && route.namespace === undefined) throw methodNotAllowed();
      return {
        status: 201,
        body: api.create(info, namespace, parseBody(bodyText, contentType), { dryRun }),
      };
    case 'PUT':
      if (route.name === undefined) throw methodNotAllowed();
      return {
        status: 200,
        body: api.replace({ info, namespace, name: route.name }, parseBody(bodyText, contentType), {
          subresource: subresourceOf(route),
          dryRun,
        }),
      };
    case 'PATCH': {
      if (route.name === undefined) throw methodNotAllowed();
      const isApply = contentType.startsWith(PatchType.apply);
      const body = isApply ? bodyText : parseBody(bodyText, 'application/json');
      const fieldManager = query.get('fieldManager');
      return {
        status: 200,
        body: api.patch({ info, namespace, name: route.name }, body, {
          contentType,
          subresource: subresourceOf(route),
          dryRun,
          ...(fieldManager === null ? {} : { fieldManager }),
        }),
      };
    }
    case 'DELETE': {
      const body = parseBody(bodyText, 'application/json');
      if (route.name === undefined) return removeCollection(context, route, body, query);
      return remove(context, route, body, query);
    }
    default:
      throw methodNotAllowed();
  }
}
