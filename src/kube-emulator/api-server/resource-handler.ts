// Serves one resource request (get, list, watch, create, replace, patch, delete) over HTTP, in
// the order the apiserver's handlers check things (handlers/create.go: output media type, input
// media type, body size, query parameters, their validation, then the body).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator, Identity } from '../auth/auth.ts';
import { negotiateInput, negotiateOutput, type OutputMedia } from './content-negotiation.ts';
import { isObject, type JsonObject } from '../json.ts';
import { apiVersionOf } from '../kinds.ts';
import { objectFilter } from '../selectors/object-filter.ts';
import { flagParam, intParam, validatePatchParams, writeParams } from './query-params.ts';
import {
  applyUnknownFieldError,
  checkBodyFields,
  checkPatchedFields,
  pruneUnknownFields,
} from '../admission/field-validation.ts';
import { decodeBody, readBody } from './request-body.ts';
import { assertFieldTypes } from '../admission/field-types.ts';
import { Propagation, PatchType, type ResourceApi, type Subresource } from '../resource-api.ts';
import { convertForMedia } from './response-body.ts';
import type { ResourceRoute } from './routes.ts';
import {
  ApiError,
  badRequest,
  expired,
  methodNotAllowed,
  routeNotFound,
} from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import type { WatchHub } from './watch-hub.ts';
import { initialEventsParam, validateListOptions } from './list-options.ts';
import { toTable } from './table.ts';

export { readBody } from './request-body.ts';

export interface ResourceContext {
  api: ResourceApi;
  hub: WatchHub;
  auth: Authenticator;
}

export interface Reply {
  status: number;
  body: unknown;
  /** The Content-Type of a body given as bytes. */
  contentType?: string;
  /** `Warning` headers (`299 - "…"`), e.g. unknown fields under fieldValidation=Warn. */
  warnings?: string[];
}

/** What the handler learned that the HTTP layer needs for its answer, errors included. */
export interface Exchange {
  /** The negotiated response media type (JSON until negotiation ran). */
  media: OutputMedia | undefined;
}

/**
 * A resourceVersion the storage cannot parse (APIObjectVersioner.ParseResourceVersion,
 * strconv.ParseUint): the apiserver answers 500 with no reason, because the storage's
 * InvalidError is not an API status (storage/api_object_versioner.go:90, cacher.go:532;
 * kubernetes/kubernetes#113939, #139485 — still open).
 */
function assertResourceVersion(value: string | null): void {
  if (value === null || value === '' || value === '0') return;
  let problem: string | undefined;
  if (!/^\d+$/.test(value)) problem = 'invalid syntax';
  else if (BigInt(value) > 2n ** 64n - 1n) problem = 'value out of range';
  if (problem === undefined) return;
  throw new ApiError({
    code: 500,
    reason: '',
    message: `resourceVersion: Invalid value: ${JSON.stringify(value)}: strconv.ParseUint: parsing ${JSON.stringify(value)}: ${problem}`,
  });
}

function subresourceOf(route: ResourceRoute): Subresource {
  const sub = route.subresource;
  if (sub === undefined) return undefined;
  if (
    (sub === 'status' || sub === 'scale' || sub === 'ephemeralcontainers') &&
    route.info.subresources.includes(sub)
  )
    return sub;
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
  const limit = intParam(query, 'limit');
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
  const grace = intParam(query, 'gracePeriodSeconds');
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
 * The field manager of a write: `fieldManager`, else the User-Agent up to its first `/`, its
 * printable characters only (handlers/rest.go prefixFromUserAgent; at most 128 characters).
 */
function fieldManagerOf(given: string | undefined, userAgent: string | undefined): string {
  if (given !== undefined && given !== '') return given;
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  return [...prefix]
    .filter((char) => char >= ' ' && char !== '\u007f')
    .join('')
    .slice(0, 128);
}

/** Whether a request writes an object from its body (create or update). */
function optionsKindOf(
  method: string,
): 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions' {
  if (method === 'POST') return 'CreateOptions';
  if (method === 'PUT') return 'UpdateOptions';
  if (method === 'PATCH') return 'PatchOptions';
  return 'DeleteOptions';
}

/** A read (get or list) as the negotiated media asks: as it is, a Table, or partial metadata. */
function readReply(
  context: ResourceContext,
  route: ResourceRoute,
  query: URLSearchParams,
  media: OutputMedia,
): Reply {
  const { api } = context;
  const { info } = route;
  const subresource = subresourceOf(route);
  if (route.name === undefined) {
    validateListOptions(query, false);
    assertResourceVersion(query.get('resourceVersion'));
  }
  const reply =
    route.name === undefined
      ? list(context, route, query)
      : {
          status: 200,
          body: api.get(info, route.namespace ?? '', route.name, subresource),
        };
  const convert = media.convert;
  if (convert === undefined || subresource !== undefined) return reply;
  if (convert.kind !== 'Table') {
    return { status: 200, body: convertForMedia(reply.body as JsonObject, media) };
  }
  const body = reply.body as { items?: KubeObject[]; metadata?: JsonObject };
  const table = toTable({
    info,
    objects: body.items ?? [reply.body as KubeObject],
    now: api.now(),
    includeObject: query.get('includeObject'),
    ...(body.items === undefined ? {} : { listMeta: body.metadata ?? {} }),
  });
  return { status: 200, body: { ...table, apiVersion: `meta.k8s.io/${convert.version}` } };
}

function serveWatch(options: {
  context: ResourceContext;
  route: ResourceRoute;
  query: URLSearchParams;
  response: ServerResponse;
  media: OutputMedia;
}): void {
  const { context, route, query, response, media } = options;
  const { info } = route;
  const fieldSelector =
    query.get('fieldSelector') ??
    (route.name === undefined ? undefined : `metadata.name=${route.name}`);
  const filter = objectFilter({
    info,
    namespace: route.namespace,
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector,
  });
  validateListOptions(query, true);
  const sendInitialEvents = initialEventsParam(query);
  const timeoutSeconds = intParam(query, 'timeoutSeconds');
  const resourceVersion = query.get('resourceVersion') ?? undefined;
  assertResourceVersion(resourceVersion ?? null);
  const convert = media.convert;
  context.hub.open(response, {
    info,
    filter,
    resourceVersion,
    allowBookmarks: flagParam(query, 'allowWatchBookmarks'),
    sendInitialEvents,
    timeoutSeconds,
    table: convert?.kind === 'Table' ? { includeObject: query.get('includeObject') } : undefined,
    encoding: media.encoding === 'protobuf' ? 'protobuf' : 'json',
    partialMetadata:
      convert !== undefined && convert.kind !== 'Table' ? convert.version : undefined,
  });
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
  exchange: Exchange;
}): Promise<Reply | undefined> {
  const { context, route, request, response, identity, exchange } = options;
  const url = new URL(request.url ?? '/', 'http://localhost');
  const query = url.searchParams;
  const method = request.method ?? 'GET';
  const watching = method === 'GET' && (route.watchPath || flagParam(query, 'watch'));
  const { info } = route;
  const namespace = route.namespace ?? '';
  context.auth.authorize(identity, {
    verb: verbOf(method, route, watching),
    info,
    subresource: route.subresource,
    namespace,
    name: route.name ?? singleNameOf(query.get('fieldSelector')),
  });
  const media = negotiateOutput(request.headers.accept, {
    stream: watching,
    prettyQuery: query.get('pretty'),
    userAgent: request.headers['user-agent'],
  });
  exchange.media = media;
  if (method === 'GET') {
    if (!watching) return readReply(context, route, query, media);
    serveWatch({ context, route, query, response, media });
    return undefined;
  }
  assertWriteRoute(method, route);
  return writeReply(context, route, request, query);
}

/** POST goes to a collection, PUT and PATCH to a named object, DELETE to either; else 405. */
function assertWriteRoute(method: string, route: ResourceRoute): void {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) throw methodNotAllowed();
  if (
    method === 'POST' &&
    (route.name !== undefined || (route.info.namespaced && route.namespace === undefined))
  )
    throw methodNotAllowed();
  if ((method === 'PUT' || method === 'PATCH') && route.name === undefined)
    throw methodNotAllowed();
}

/** A write request's body and the parameters every write method reads. */
interface WriteRequest {
  context: ResourceContext;
  route: ResourceRoute;
  query: URLSearchParams;
  contentType: string;
  /** The body's encoding: negotiated for POST and PUT, JSON for PATCH and DELETE. */
  inputEncoding: ReturnType<typeof negotiateInput>;
  bodyBytes: Buffer;
  params: ReturnType<typeof writeParams>;
  manager: string;
}

/** The reply to a POST, PUT, PATCH or DELETE (the route already checked by assertWriteRoute). */
async function writeReply(
  context: ResourceContext,
  route: ResourceRoute,
  request: IncomingMessage,
  query: URLSearchParams,
): Promise<Reply> {
  const method = request.method ?? 'GET';
  const contentType = request.headers['content-type'] ?? '';
  const inputEncoding =
    method === 'POST' || method === 'PUT' ? negotiateInput(contentType) : 'json';
  const bodyBytes = await readBody(request);
  const params = writeParams(query, optionsKindOf(method));
  const write: WriteRequest = {
    context,
    route,
    query,
    contentType,
    inputEncoding,
    bodyBytes,
    params,
    manager: fieldManagerOf(params.fieldManager, request.headers['user-agent']),
  };
  switch (method) {
    case 'POST': {
      const { body, warnings } = objectBody(write);
      const { info } = route;
      const options = { dryRun: params.dryRun, manager: write.manager };
      const created = context.api.create(info, route.namespace ?? '', body, options);
      return { status: 201, body: created, warnings };
    }
    case 'PUT': {
      const { body, warnings } = objectBody(write);
      return {
        status: 200,
        body: context.api.replace(
          { info: route.info, namespace: route.namespace ?? '', name: route.name ?? '' },
          body,
          { subresource: subresourceOf(route), dryRun: params.dryRun, manager: write.manager },
        ),
        warnings,
      };
    }
    case 'PATCH':
      return patchReply(write);
    default: {
      const body = decodeBody(write.bodyBytes, 'json');
      if (route.name === undefined) return removeCollection(context, route, body, query);
      return remove(context, route, body, query);
    }
  }
}

/** Decodes a create or update body, dropping unknown fields as fieldValidation says. */
function objectBody(write: WriteRequest): { body: unknown; warnings: string[] } {
  const { info } = write.route;
  const { inputEncoding } = write;
  const body = decodeBody(write.bodyBytes, inputEncoding);
  if (!isObject(body) || write.route.subresource === 'scale') return { body, warnings: [] };
  if (inputEncoding === 'json') assertFieldTypes(info, body);
  const unknown = pruneUnknownFields(info, body);
  return { body, warnings: checkBodyFields(write.params.fieldValidation, unknown) };
}

/** A patch of any type; a server-side apply that created the object answers 201, as a create does. */
function patchReply(write: WriteRequest): Reply {
  const { context, route, contentType, params } = write;
  const { info } = route;
  const namespace = route.namespace ?? '';
  const name = route.name ?? '';
  const isApply = contentType.startsWith(PatchType.apply);
  validatePatchParams(params, isApply);
  const body = isApply ? write.bodyBytes.toString('utf8') : decodeBody(write.bodyBytes, 'json');
  const warnings: string[] = [];
  const inspect = (object: KubeObject, applied: boolean): void => {
    const unknown = pruneUnknownFields(info, object);
    if (unknown.length === 0) return;
    if (applied) throw applyUnknownFieldError(info, namespace, name, unknown);
    warnings.push(...checkPatchedFields(params.fieldValidation, unknown, object));
  };
  const existed = context.api.peek(info, namespace, name) !== undefined;
  const patched = context.api.patch({ info, namespace, name }, body, {
    contentType,
    subresource: subresourceOf(route),
    dryRun: params.dryRun,
    inspect,
    manager: write.manager,
    force: params.force === true,
    ...(params.fieldManager === undefined ? {} : { fieldManager: params.fieldManager }),
  });
  return { status: existed ? 200 : 201, body: patched, warnings };
}
