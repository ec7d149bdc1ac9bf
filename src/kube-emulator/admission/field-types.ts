// Wrongly-typed fields, as the apiserver's JSON decoding reports them. The body is decoded into the
// kind's Go struct with sigs.k8s.io/json (a fork of encoding/json): a value of the wrong JSON type
// is an *UnmarshalTypeError — the first one in document order is kept (decodeState.saveError) —
// whose text is `json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type
// <type>`: <value> is `string`, `number`, `bool`, `array` or `object` (`number 1.5` for a number an
// integer field cannot hold), <Struct> the innermost Go struct, <path> the JSON field names from
// the root without indices or map keys (errorContext.FieldStack). handlers/create.go and
// update.go answer it through transformDecodeError (apiserver/pkg/endpoints/handlers/rest.go):
// 400 BadRequest `<Kind> in version "<v>" cannot be handled as a <Kind>: <error>`.
// intstr.IntOrString decodes a non-string into an int32, so its error names int32; types with
// other decoders of their own (Time, Quantity, RawExtension, FieldsV1) are not checked here.
// Known difference: a named Go type (`v1.Protocol`, `v1.ResourceList`) is named by its underlying
// type (`string`, the map), since the OpenAPI definitions do not carry Go type names.
import { isObject, type JsonObject } from '../json.ts';
import type { KindInfo } from '../kinds.ts';
import { definitionOf, definitions } from '../openapi/openapi-schemas.ts';
import { badRequest } from '../status-errors.ts';

interface Resolved {
  schema: JsonObject;
  /** The Go type of a definition reached by $ref (`v1.PodSpec`), when one was. */
  goType?: string;
  definition?: string;
}

/** `io.k8s.api.core.v1.PodSpec` → `v1.PodSpec` (the Go package's name and the type's). */
function goTypeOf(definition: string): string {
  const parts = definition.split('.');
  return parts.slice(-2).join('.');
}

function refOf(schema: JsonObject): string | undefined {
  if (typeof schema.$ref === 'string') return schema.$ref;
  const first: unknown = Array.isArray(schema.allOf) ? schema.allOf[0] : undefined;
  return isObject(first) && typeof first.$ref === 'string' ? first.$ref : undefined;
}

function resolve(schema: JsonObject): Resolved {
  const ref = refOf(schema);
  if (ref === undefined) return { schema };
  const name = ref.replace('#/definitions/', '');
  const next = definitions()[name];
  return next === undefined
    ? { schema: {} }
    : { schema: next, goType: goTypeOf(name), definition: name };
}

/** The Go type of a schema, as reflect.Type.String() would print it (underlying types). */
function goType(schema: JsonObject): string {
  const resolved = resolve(schema);
  if (resolved.schema.format === 'int-or-string') return 'int32';
  if (resolved.goType !== undefined) return resolved.goType;
  const { type, format } = resolved.schema;
  if (type === 'integer') return format === 'int32' ? 'int32' : 'int64';
  if (type === 'number') return 'float64';
  if (type === 'boolean') return 'bool';
  if (type === 'string') return format === 'byte' ? '[]uint8' : 'string';
  if (type === 'array')
    return `[]${isObject(resolved.schema.items) ? goType(resolved.schema.items) : 'interface {}'}`;
  if (type === 'object' && isObject(resolved.schema.additionalProperties))
    return `map[string]${goType(resolved.schema.additionalProperties)}`;
  return 'interface {}';
}

function jsonKind(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? 'array' : 'object';
}

interface Context {
  struct: string;
  path: readonly string[];
}

interface TypeError_ {
  value: string;
  type: string;
  context: Context;
}

const mismatch = (value: string, type: string, context: Context): TypeError_ => ({
  value,
  type,
  context,
});

const INT_LIMITS: Record<string, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

/** The first type error under `value` (null decodes into anything: no error). */
function check(value: unknown, schema: JsonObject, context: Context): TypeError_ | undefined {
  if (value === null || value === undefined) return undefined;
  const resolved = resolve(schema);
  const target = resolved.schema;
  if (target.format === 'int-or-string') {
    if (typeof value === 'string') return undefined;
    return checkScalar(value, 'int32', context);
  }
  // Types with a decoder of their own (Time, MicroTime, Quantity, RawExtension, FieldsV1).
  if (resolved.definition !== undefined && target.type !== 'object' && target.type !== 'array')
    return undefined;
  if (target.type === 'object' || (target.type === undefined && isObject(target.properties)))
    return checkObject(value, resolved, context);
  if (target.type === 'array') {
    if (!Array.isArray(value)) return mismatch(jsonKind(value), goType(schema), context);
    const items = isObject(target.items) ? target.items : {};
    for (const item of value) {
      const found = check(item, items, context);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return checkScalar(value, goType(schema), context);
}

function checkScalar(value: unknown, type: string, context: Context): TypeError_ | undefined {
  const kind = jsonKind(value);
  if (type === 'string') return kind === 'string' ? undefined : mismatch(kind, type, context);
  if (type === 'bool') return kind === 'bool' ? undefined : mismatch(kind, type, context);
  if (type === 'float64') return kind === 'number' ? undefined : mismatch(kind, type, context);
  const limits = INT_LIMITS[type];
  if (limits === undefined) return undefined;
  if (kind !== 'number') return mismatch(kind, type, context);
  const text = JSON.stringify(value);
  const whole = /^-?\d+$/.test(text) ? BigInt(text) : undefined;
  if (whole === undefined || whole < limits[0] || whole > limits[1])
    return mismatch(`number ${text}`, type, context);
  return undefined;
}

function checkObject(value: unknown, resolved: Resolved, context: Context): TypeError_ | undefined {
  const target = resolved.schema;
  if (!isObject(value))
    return mismatch(jsonKind(value), resolved.goType ?? goType(target), context);
  const properties = isObject(target.properties) ? target.properties : undefined;
  if (properties === undefined) {
    const additional = isObject(target.additionalProperties)
      ? target.additionalProperties
      : undefined;
    if (additional === undefined) return undefined;
    for (const item of Object.values(value)) {
      const found = check(item, additional, context);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const struct = resolved.goType?.split('.').at(-1) ?? context.struct;
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (!isObject(property)) continue; // unknown: field-validation.ts
    const found = check(item, property, { struct, path: [...context.path, key] });
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Throws the apiserver's 400 for the first wrongly-typed field of a create or update body. */
export function assertFieldTypes(info: KindInfo, body: JsonObject): void {
  const name = definitionOf(info.group, info.version, info.kind);
  if (definitions()[name] === undefined) return;
  const found = check(body, { $ref: `#/definitions/${name}` }, { struct: info.kind, path: [] });
  if (found === undefined) return;
  const { struct, path } = found.context;
  const into =
    path.length === 0
      ? `Go value of type ${found.type}`
      : `Go struct field ${struct}.${path.join('.')} of type ${found.type}`;
  throw badRequest(
    `${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: json: cannot unmarshal ${found.value} into ${into}`,
  );
}
