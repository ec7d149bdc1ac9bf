// Response bodies in the negotiated media type: JSON (indented when pretty), YAML, or protobuf
// (`k8s\0` + runtime.Unknown), and the meta.k8s.io conversions a client asked for with
// `as=PartialObjectMetadata|PartialObjectMetadataList` (handlers/response.go, v0.32.4:
// asPartialObjectMetadata, asPartialObjectMetadataList).
import { stringify as toYaml } from 'yaml';
import { MediaType, type OutputMedia } from './content-negotiation.ts';
import { isObject, type JsonObject } from '../json.ts';
import { encodeObject, hasProtobuf } from '../protobuf/envelope.ts';
import { ApiError } from '../status-errors.ts';

export interface EncodedBody {
  contentType: string;
  body: string | Uint8Array;
}

/** The bytes and Content-Type of `body` (a JSON value) for `media`. */
export function encodeBody(body: unknown, media: OutputMedia): EncodedBody {
  if (typeof body === 'string') return { contentType: 'text/plain; charset=utf-8', body };
  if (media.encoding === 'protobuf' && isObject(body) && hasProtobuf(body)) {
    return { contentType: MediaType.protobuf, body: encodeObject(body) };
  }
  if (media.encoding === 'yaml') return { contentType: MediaType.yaml, body: toYaml(body) };
  return {
    contentType: MediaType.json,
    body: media.pretty ? `${JSON.stringify(body, null, 2)}\n` : JSON.stringify(body),
  };
}

function notAcceptableConversion(message: string): ApiError {
  return new ApiError({ code: 406, reason: 'NotAcceptable', message });
}

/** The Go type the apiserver names in its 406 (`*core.Secret`, `*apps.StatefulSetList`). */
function goTypeOf(apiVersion: unknown, kind: unknown): string {
  const group =
    typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const pkg = group === '' || group === undefined ? 'core' : (group.split('.')[0] ?? group);
  return `*${pkg}.${String(kind)}`;
}

export function partialObjectMetadata(object: JsonObject, version: string): JsonObject {
  return {
    kind: 'PartialObjectMetadata',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: isObject(object.metadata) ? object.metadata : {},
  };
}

/**
 * `object` (a served object or list) converted as `media.convert` asks, for the
 * PartialObjectMetadata kinds; anything else is returned as it is.
 */
export function convertForMedia(object: JsonObject, media: OutputMedia): JsonObject {
  const convert = media.convert;
  if (convert === undefined || convert.kind === 'Table') return object;
  const isList = Array.isArray(object.items);
  if (convert.kind === 'PartialObjectMetadata') {
    if (isList) {
      throw notAcceptableConversion(
        `you requested PartialObjectMetadata, but the requested object is a list (${goTypeOf(object.apiVersion, object.kind)})`,
      );
    }
    return partialObjectMetadata(object, convert.version);
  }
  if (!isList) {
    throw notAcceptableConversion(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeOf(object.apiVersion, object.kind)})`,
    );
  }
  const metadata = isObject(object.metadata) ? object.metadata : {};
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${convert.version}`,
    metadata,
    items: (object.items as unknown[])
      .filter(isObject)
      .map((item) => partialObjectMetadata(item, convert.version)),
  };
}
