// Accept and Content-Type negotiation as the apiserver does it
// (k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go, v0.32.4:
// NegotiateOutputMediaType, NegotiateMediaTypeOptions, acceptMediaTypeOptions; the endpoint
// restrictions of handlers/rest.go AllowsMediaTypeTransform): JSON, YAML and protobuf, the
// `as=Table|PartialObjectMetadata|PartialObjectMetadataList;g=meta.k8s.io;v=v1|v1beta1`
// conversions, `pretty`, and 406 NotAcceptable / 415 UnsupportedMediaType with its messages.
import { ApiError } from '../status-errors.ts';

export type Encoding = 'json' | 'yaml' | 'protobuf';

export const MediaType = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: 'application/vnd.kubernetes.protobuf',
} as const;

/** The order the apiserver's codec factory lists its serializers (CBOR off, as in 1.32). */
const supported: readonly Encoding[] = ['json', 'yaml', 'protobuf'];
/** Serializers with a stream (watch) form: YAML has none. */
const streaming: readonly Encoding[] = ['json', 'protobuf'];

export type ConvertKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputMedia {
  encoding: Encoding;
  /** `as=…;g=meta.k8s.io;v=…`: the response is converted to this meta.k8s.io kind. */
  convert: { kind: ConvertKind; version: 'v1' | 'v1beta1' } | undefined;
  /** Indented JSON (`pretty=1` in Accept, `?pretty=true`, or a curl/Wget/browser client). */
  pretty: boolean;
}

export const defaultMedia: OutputMedia = { encoding: 'json', convert: undefined, pretty: false };

interface Clause {
  type: string;
  subType: string;
  q: number;
  params: Map<string, string>;
}

/** goautoneg.ParseAccept: clauses sorted by q, then specific before wildcard. */
function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...rawParams] = part.split(';').map((piece) => piece.trim());
    const [type = '', subType = ''] = range.split('/');
    if (type === '') continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const param of rawParams) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const key = param.slice(0, eq).trim();
      const value = param.slice(eq + 1).trim();
      if (key === 'q') q = Number(value);
      else params.set(key, value);
    }
    clauses.push({ type, subType: subType === '' ? '*' : subType, q, params });
  }
  return clauses
    .map((clause, index) => ({ clause, index }))
    .sort((a, b) => {
      if (a.clause.q !== b.clause.q) return b.clause.q - a.clause.q;
      const wildA = (a.clause.type === '*' ? 2 : 0) + (a.clause.subType === '*' ? 1 : 0);
      const wildB = (b.clause.type === '*' ? 2 : 0) + (b.clause.subType === '*' ? 1 : 0);
      return wildA - wildB || a.index - b.index;
    })
    .map(({ clause }) => clause);
}

function matches(clause: Clause, encoding: Encoding): boolean {
  const [type, subType] = MediaType[encoding].split('/') as [string, string];
  if (clause.type === '*' && clause.subType === '*') return true;
  return clause.type === type && (clause.subType === '*' || clause.subType === subType);
}

/** acceptMediaTypeOptions plus the resource endpoints' AllowsMediaTypeTransform. */
function options(clause: Clause, encoding: Encoding, stream: boolean): OutputMedia | undefined {
  let convert: { kind: string; group: string; version: string } | undefined;
  let pretty = false;
  for (const [key, value] of clause.params) {
    if (key === 'as' || key === 'g' || key === 'v') {
      convert ??= { kind: '', group: '', version: '' };
      if (key === 'as') convert.kind = value;
      else if (key === 'g') convert.group = value;
      else convert.version = value;
    } else if (key === 'stream') {
      if (value !== '' && (value !== 'watch' || !streaming.includes(encoding))) return undefined;
    } else if (key === 'pretty') pretty = value === '1';
  }
  if (convert === undefined) return { encoding, convert: undefined, pretty };
  if (
    convert.group !== 'meta.k8s.io' ||
    (convert.version !== 'v1' && convert.version !== 'v1beta1')
  )
    return undefined;
  const version = convert.version;
  switch (convert.kind) {
    case 'Table':
      // Table has no protobuf form; only JSON and YAML (and never as a stream of YAML).
      if (encoding === 'protobuf' || (stream && encoding === 'yaml')) return undefined;
      return { encoding, convert: { kind: 'Table', version }, pretty };
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return { encoding, convert: { kind: convert.kind, version }, pretty };
    default:
      return undefined;
  }
}

export function notAcceptable(accepted: readonly string[]): ApiError {
  return new ApiError({
    code: 406,
    reason: 'NotAcceptable',
    message: `only the following media types are accepted: ${accepted.join(', ')}`,
  });
}

/**
 * The response media type for a resource request, or 406. `stream` for watches: the
 * serializer must have a stream form (`application/json;stream=watch`,
 * `application/vnd.kubernetes.protobuf;stream=watch`).
 */
export function negotiateOutput(
  accept: string | undefined,
  options_: { stream: boolean; prettyQuery: string | null; userAgent: string | undefined },
): OutputMedia {
  const prettyByClient = isPrettyPrint(options_.prettyQuery, options_.userAgent);
  if (accept === undefined || accept.trim() === '')
    return { ...defaultMedia, pretty: prettyByClient };
  const offered = options_.stream ? streaming : supported;
  for (const clause of parseAccept(accept)) {
    if (clause.q <= 0) continue;
    for (const encoding of supported) {
      if (!matches(clause, encoding)) continue;
      const media = options(clause, encoding, options_.stream);
      if (media === undefined) continue;
      // A watch that negotiated a serializer without a stream form is refused
      // (NegotiateOutputMediaTypeStream), it does not fall through to the next clause.
      if (!offered.includes(media.encoding)) throw notAcceptable(acceptedList(options_.stream));
      return { ...media, pretty: media.pretty || prettyByClient };
    }
  }
  throw notAcceptable(acceptedList(options_.stream));
}

function acceptedList(stream: boolean): string[] {
  return stream
    ? streaming.map((encoding) => `${MediaType[encoding]};stream=watch`)
    : supported.map((encoding) => MediaType[encoding]);
}

/** negotiate.go isPrettyPrint: `?pretty=` by strconv.ParseBool, else curl/Wget/browsers. */
function isPrettyPrint(query: string | null, userAgent: string | undefined): boolean {
  if (query !== null && query !== '')
    return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(query);
  const agent = userAgent ?? '';
  return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0');
}

/**
 * The serializer of a request body (NegotiateInputSerializerForMediaType): none given means
 * JSON; an unknown one is 415 with the list the apiserver gives.
 */
export function negotiateInput(contentType: string | undefined): Encoding {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === '' || type === MediaType.json) return 'json';
  if (type === MediaType.yaml) return 'yaml';
  if (type === MediaType.protobuf) return 'protobuf';
  throw new ApiError({
    code: 415,
    reason: 'UnsupportedMediaType',
    message: `the body of the request was in an unknown format - accepted media types include: ${supported.map((encoding) => MediaType[encoding]).join(', ')}`,
  });
}
