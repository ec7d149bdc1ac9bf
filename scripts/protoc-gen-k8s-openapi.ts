// A buf plugin (buf.gen.k8s.yaml): writes the OpenAPI v2 definitions of the Kubernetes messages
// in proto/k8s to openapi-definitions.json, as kube-openapi derives them from the same Go types:
// the doc comments (which go-to-protobuf copies into the .proto files) formatted like
// kube-openapi's fmtRawDoc, JSON names and `required` from the Go facts (go-fields.json:
// required = neither omitempty nor a pointer nor `+optional`), embedded structs flattened, the
// `+patchMergeKey`/`+patchStrategy`/`+listType`/`+listMapKey`/`+mapType`/`+structType` tags as
// `x-kubernetes-*` extensions, apiVersion/kind on objects that embed TypeMeta, and the special
// apimachinery types (Time, Quantity, IntOrString, RawExtension, …) as their JSON schemas.
import { readFileSync, writeFileSync } from 'node:fs';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  CodeGeneratorRequestSchema,
  CodeGeneratorResponseSchema,
  CodeGeneratorResponse_Feature,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  type DescriptorProto,
  type FieldDescriptorProto,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';

type Schema = Record<string, unknown>;

interface GoFacts {
  wrappers: string[];
  typeMeta: string[];
  fields: Record<string, Record<string, string>>;
}

const facts = JSON.parse(
  readFileSync('src/kube-emulator/protobuf/go-fields.json', 'utf8'),
) as GoFacts;
const wrappers = new Set(facts.wrappers);
const typeMeta = new Set(facts.typeMeta);

/** `k8s.io.api.core.v1.Pod` → `io.k8s.api.core.v1.Pod`, the name kube-openapi gives it. */
function definitionName(protoName: string): string {
  return protoName.replace(/^\.?k8s\.io\./, 'io.k8s.');
}

/** kube-openapi's fmtRawDoc: paragraphs kept, `+tags` and one-line TODOs dropped, `---` ends. */
function formatDoc(raw: string): string {
  const text =
    raw
      .split('\n')
      .map((line) => (line.startsWith(' ') ? line.slice(1) : line))
      .join('\n')
      .split('---')[0] ?? '';
  let out = '';
  const dropLast = (): void => {
    if (out.length > 0) out = out.slice(0, -1);
  };
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trimEnd();
    const leading = line.trimStart();
    if (line.length === 0) {
      dropLast();
      out += '\n\n';
    } else if (leading.startsWith('TODO') || leading.startsWith('+')) {
      continue;
    } else if (line.startsWith(' ') || line.startsWith('\t')) {
      dropLast();
      out += `\n${line}\n`;
    } else if (line.endsWith('.')) out += `${line}\n`;
    else out += `${line} `;
  }
  return out.replace(/\n+$/, '').trim();
}

/** `+name=value` tags of a comment, in order (a tag may repeat: `+listMapKey`). */
function tags(raw: string): [string, string][] {
  const found: [string, string][] = [];
  for (const line of raw.split('\n')) {
    const match = /^\s*\+([\w.:-]+)(?:=(.*))?$/.exec(line);
    if (match?.[1] !== undefined) found.push([match[1], (match[2] ?? '').trim()]);
  }
  return found;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** The special apimachinery types: their JSON is not their protobuf message. */
const special: Record<string, Schema> = {
  [`${META}.Time`]: { type: 'string', format: 'date-time' },
  [`${META}.MicroTime`]: { type: 'string', format: 'date-time' },
  [`${META}.Duration`]: { type: 'string' },
  [`${META}.FieldsV1`]: { type: 'object' },
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string' },
  'k8s.io.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
  'k8s.io.apimachinery.pkg.runtime.RawExtension': { type: 'object' },
};

function scalarSchema(field: FieldDescriptorProto): Schema {
  switch (field.type) {
    case FieldDescriptorProto_Type.STRING:
      return { type: 'string' };
    case FieldDescriptorProto_Type.BYTES:
      return { type: 'string', format: 'byte' };
    case FieldDescriptorProto_Type.BOOL:
      return { type: 'boolean' };
    case FieldDescriptorProto_Type.INT32:
    case FieldDescriptorProto_Type.UINT32:
      return { type: 'integer', format: 'int32' };
    case FieldDescriptorProto_Type.INT64:
    case FieldDescriptorProto_Type.UINT64:
      return { type: 'integer', format: 'int64' };
    case FieldDescriptorProto_Type.DOUBLE:
      return { type: 'number', format: 'double' };
    case FieldDescriptorProto_Type.FLOAT:
      return { type: 'number', format: 'float' };
    default:
      return {};
  }
}

const files = new Map<string, FileDescriptorProto>();
const messages = new Map<
  string,
  { message: DescriptorProto; file: FileDescriptorProto; index: number }
>();

function comment(file: FileDescriptorProto, path: number[]): string {
  const key = path.join(',');
  const location = file.sourceCodeInfo?.location.find((l) => l.path.join(',') === key);
  return location?.leadingComments ?? '';
}

const definitions: Record<string, Schema> = {};

/** A field's value schema (no description), or the map-entry value for maps. */
function valueSchema(field: FieldDescriptorProto): Schema {
  if (field.type !== FieldDescriptorProto_Type.MESSAGE) return scalarSchema(field);
  const name = field.typeName.replace(/^\./, '');
  const entry = messages.get(name);
  if (entry?.message.options?.mapEntry === true) {
    const value = entry.message.field.find((f) => f.number === 2);
    return { type: 'object', additionalProperties: value === undefined ? {} : valueSchema(value) };
  }
  return { $ref: `#/definitions/${definitionName(name)}` };
}

function messageSchema(name: string): Schema {
  const entry = messages.get(name);
  if (entry === undefined) return {};
  const { message, file, index } = entry;
  const description = formatDoc(comment(file, [4, index]));
  if (special[name] !== undefined) return { description, ...special[name] };
  if (wrappers.has(name)) return { description, type: 'array', items: { type: 'string' } };
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  if (typeMeta.has(name)) {
    properties.apiVersion = {
      description:
        'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
      type: 'string',
    };
    properties.kind = {
      description:
        'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      type: 'string',
    };
  }
  const goFields = facts.fields[name] ?? {};
  message.field.forEach((field, fieldIndex) => {
    const flags = goFields[field.name];
    const raw = comment(file, [4, index, 2, fieldIndex]);
    const fieldTags = tags(raw);
    if (flags !== undefined && /^p?o?i/.test(flags)) {
      // An embedded struct: its properties are the parent's (kube-openapi flattens inline).
      const embedded = messageSchema(field.typeName.replace(/^\./, ''));
      Object.assign(properties, embedded.properties);
      if (Array.isArray(embedded.required)) required.push(...(embedded.required as string[]));
      return;
    }
    const jsonName = (flags === undefined ? undefined : /j:(.+)$/.exec(flags)?.[1]) ?? field.name;
    if (jsonName === '-') return;
    let schema: Schema = valueSchema(field);
    const isMap = schema.type === 'object' && 'additionalProperties' in schema;
    if (field.label === FieldDescriptorProto_Label.REPEATED && !isMap)
      schema = { type: 'array', items: schema };
    const extensions: Schema = {};
    const listMapKeys: string[] = [];
    for (const [tag, value] of fieldTags) {
      if (tag === 'patchMergeKey') extensions['x-kubernetes-patch-merge-key'] = value;
      else if (tag === 'patchStrategy') extensions['x-kubernetes-patch-strategy'] = value;
      else if (tag === 'listType') extensions['x-kubernetes-list-type'] = value;
      else if (tag === 'listMapKey') listMapKeys.push(value);
      else if (tag === 'mapType') extensions['x-kubernetes-map-type'] = value;
    }
    if (listMapKeys.length > 0) extensions['x-kubernetes-list-map-keys'] = listMapKeys;
    const doc = formatDoc(raw);
    properties[jsonName] = {
      ...(doc === '' ? {} : { description: doc }),
      ...schema,
      ...extensions,
    };
    const optional =
      flags === undefined || /^p|o/.test(flags) || fieldTags.some(([tag]) => tag === 'optional');
    if (!optional) required.push(jsonName);
  });
  const structType = tags(comment(file, [4, index])).find(([tag]) => tag === 'structType')?.[1];
  return {
    ...(description === '' ? {} : { description }),
    type: 'object',
    ...(required.length > 0 ? { required } : {}),
    properties,
    ...(structType === undefined ? {} : { 'x-kubernetes-map-type': structType }),
  };
}

const request = fromBinary(CodeGeneratorRequestSchema, readFileSync(0));
for (const file of request.protoFile) {
  files.set(file.name, file);
  file.messageType.forEach((message, index) => {
    messages.set(`${file.package}.${message.name}`, { message, file, index });
    for (const nested of message.nestedType)
      messages.set(`${file.package}.${message.name}.${nested.name}`, {
        message: nested,
        file,
        index: -1,
      });
  });
}
for (const [name, entry] of messages) {
  if (entry.index < 0 || !name.startsWith('k8s.io.')) continue;
  definitions[definitionName(name)] = messageSchema(name);
}
const sorted = Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => (a < b ? -1 : 1)));
const response = create(CodeGeneratorResponseSchema, {
  supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
  file: [{ name: 'openapi-definitions.json', content: `${JSON.stringify(sorted)}\n` }],
});
writeFileSync(1, toBinary(CodeGeneratorResponseSchema, response));
