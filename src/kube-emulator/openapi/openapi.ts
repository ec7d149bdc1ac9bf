// The OpenAPI documents kubectl reads: /openapi/v2 (JSON, or the gnostic protobuf form
// `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` that kubectl 1.27–1.28 download
// before every apply, create, edit and replace), /openapi/v3 (the group-version list) and one
// v3 document per group version, with the schemas of the served kinds (openapi-schemas.ts) and
// their operations with the `fieldValidation` parameter, so kubectl leaves validation to the
// server (query_param_verifier_v3.go) and `kubectl explain` has descriptions.
import { createHash } from 'node:crypto';
import { isObject, type JsonObject } from '../json.ts';
import { apiVersionOf, kinds, type KindInfo } from '../kinds.ts';
import { definitionOf, definitions, groupVersionDefinitions } from './openapi-schemas.ts';
import { encodeOpenApiV2 } from './openapi-v2-proto.ts';

/** What kubectl asks for in Accept. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/**
 * What the apiserver answers in Content-Type (kube-openapi handler.go: the `@` would not parse
 * as a media type in the client, so the returned type spells it with a dot).
 */
export const OPENAPI_V2_PROTOBUF_RETURNED =
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const VERSION = 'v1.32.4';

function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const gvkOf = (info: KindInfo): JsonObject => ({
  group: info.group,
  kind: info.kind,
  version: info.version,
});

function queryParameters(names: readonly string[]): JsonObject[] {
  return names.map((name) => ({
    name,
    in: 'query',
    type: name === 'force' ? 'boolean' : 'string',
    uniqueItems: true,
  }));
}

/** The v2 operations of one served kind (ref: `#/definitions/…` or `#/components/schemas/…`). */
function operations(info: KindInfo, refBase: string): Record<string, JsonObject> {
  const base = `/${groupVersionPath(info.group, info.version)}${info.namespaced ? '/namespaces/{namespace}' : ''}/${info.resource}`;
  const ref = { $ref: `${refBase}${definitionOf(info.group, info.version, info.kind)}` };
  const listRef = {
    $ref: `${refBase}${definitionOf(info.group, info.version, `${info.kind}List`)}`,
  };
  const op = (
    action: string,
    verb: string,
    params: readonly string[],
    body: boolean,
  ): JsonObject => ({
    operationId: `${verb}${info.namespaced ? 'Namespaced' : ''}${info.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvkOf(info),
    parameters: [
      ...(body
        ? [
            {
              name: 'body',
              in: 'body',
              required: true,
              schema: action === 'patch' ? { type: 'object' } : ref,
            },
          ]
        : []),
      ...queryParameters(params),
    ],
    responses: { '200': { description: 'OK', schema: action === 'list' ? listRef : ref } },
  });
  const writes = ['dryRun', 'fieldManager', 'fieldValidation'];
  return {
    [base]: {
      get: op(
        'list',
        'list',
        ['labelSelector', 'fieldSelector', 'limit', 'continue', 'watch'],
        false,
      ),
      post: op('post', 'create', writes, true),
    },
    [`${base}/{name}`]: {
      get: op('get', 'read', [], false),
      put: op('put', 'replace', writes, true),
      patch: op('patch', 'patch', [...writes, 'force'], true),
      delete: op('delete', 'delete', ['dryRun', 'gracePeriodSeconds', 'propagationPolicy'], false),
    },
  };
}

let v2Json: JsonObject | undefined;

/** The OpenAPI v2 (swagger 2.0) document of every served kind. */
export function openApiV2(): JsonObject {
  if (v2Json !== undefined) return v2Json;
  let paths: JsonObject = {};
  for (const info of kinds) paths = { ...paths, ...operations(info, '#/definitions/') };
  v2Json = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: VERSION },
    paths,
    definitions: definitions(),
  };
  return v2Json;
}

let v2Proto: Uint8Array | undefined;

/** The v2 document as gnostic's openapi.v2.Document protobuf. */
export function openApiV2Protobuf(): Uint8Array {
  v2Proto ??= encodeOpenApiV2(openApiV2());
  return v2Proto;
}

/** A v2 schema in v3 form: refs into components, a described ref wrapped in allOf. */
function toV3(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toV3);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) out[key] = toV3(item);
  if (typeof out.$ref === 'string') {
    out.$ref = out.$ref.replace('#/definitions/', '#/components/schemas/');
    if (Object.keys(out).length > 1) {
      const { $ref, ...rest } = out;
      return { ...rest, allOf: [{ $ref }] };
    }
  }
  return out;
}

const v3Cache = new Map<string, JsonObject>();

function groupVersionDocument(path: string): JsonObject | undefined {
  const cached = v3Cache.get(path);
  if (cached !== undefined) return cached;
  const served = kinds.filter((info) => groupVersionPath(info.group, info.version) === path);
  const first = served[0];
  if (first === undefined) return undefined;
  let paths: JsonObject = {};
  for (const info of served) {
    const v2 = operations(info, '#/components/schemas/');
    for (const [route, item] of Object.entries(v2)) {
      const converted: JsonObject = {};
      for (const [method, op] of Object.entries(item)) {
        const {
          parameters,
          responses: _r,
          ...rest
        } = op as { parameters: JsonObject[]; responses: unknown };
        converted[method] = {
          ...rest,
          parameters: parameters
            .filter((parameter) => parameter.in !== 'body')
            .map(({ type, uniqueItems, ...parameter }) => ({
              ...parameter,
              schema: { type, uniqueItems },
            })),
          responses: { '200': { description: 'OK' } },
        };
      }
      paths = { ...paths, [route]: converted };
    }
  }
  const all = definitions();
  const schemas: JsonObject = {};
  for (const name of groupVersionDefinitions(first.group, first.version))
    schemas[name] = toV3(all[name]);
  const document = {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: VERSION },
    paths,
    components: { schemas },
  };
  v3Cache.set(path, document);
  return document;
}

function hashOf(path: string): string {
  return createHash('sha512')
    .update(
      `${VERSION}:${path}:${kinds.map((info) => `${apiVersionOf(info)}/${info.kind}`).join(',')}`,
    )
    .digest('hex')
    .slice(0, 128)
    .toUpperCase();
}

function root(): JsonObject {
  const paths: JsonObject = {};
  for (const info of kinds) {
    const path = groupVersionPath(info.group, info.version);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hashOf(path)}` };
  }
  return { paths };
}

/** The OpenAPI document at `path` (JSON form), or undefined for a path not served (404). */
export function openApiDocument(path: string): JsonObject | undefined {
  if (path === '/openapi/v2') return openApiV2();
  if (path === '/openapi/v3') return root();
  const match = /^\/openapi\/v3\/(.+)$/.exec(path);
  return match?.[1] === undefined ? undefined : groupVersionDocument(match[1]);
}
