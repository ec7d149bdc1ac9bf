// JSON objects to Kubernetes protobuf and back, as the apiserver's Go types do it: fields in
// number order, non-pointer fields always written (Go's generated marshallers do not test
// them), map keys sorted, and the special JSON forms of apimachinery's types (Time, MicroTime,
// Duration, IntOrString, Quantity, RawExtension, FieldsV1, byte fields as base64, named-slice
// wrappers as bare arrays). Decoding applies `omitempty` the way encoding/json does.
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { formatDuration, parseDuration } from './go-duration.ts';
import { goField, isWrapper } from './registry.ts';

type Json = unknown;
type JsonObject = Record<string, unknown>;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const DURATION = `${META}.Duration`;
const FIELDS_V1 = `${META}.FieldsV1`;
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'k8s.io.apimachinery.pkg.runtime.RawExtension';

/** A request body that does not fit its message (answered 400 by the caller). */
export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
}

const sortedCache = new WeakMap<DescMessage, readonly DescField[]>();
function sortedFields(message: DescMessage): readonly DescField[] {
  let sorted = sortedCache.get(message);
  if (sorted === undefined) {
    sorted = [...message.fields].sort((a, b) => a.number - b.number);
    sortedCache.set(message, sorted);
  }
  return sorted;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------- encoding

/** The protobuf bytes of `value` (a JSON object) as message `message`. */
export function encodeMessage(message: DescMessage, value: JsonObject): Uint8Array {
  const writer = new BinaryWriter();
  writeFields(writer, message, value);
  return writer.finish();
}

function writeFields(
  writer: BinaryWriter,
  message: DescMessage,
  value: JsonObject | undefined,
): void {
  for (const field of sortedFields(message)) {
    const fact = goField(message, field);
    // An inline (embedded) struct takes its fields from the parent's JSON object.
    const item = fact.inline ? (value ?? {}) : value?.[fact.json];
    const absent = item === undefined || item === null;
    switch (field.fieldKind) {
      case 'scalar':
        if (absent) {
          // Go writes a non-pointer scalar even when zero; []byte only when non-nil.
          if (fact.pointer || field.scalar === ScalarType.BYTES) continue;
          writeScalar(writer, field.number, field.scalar, zeroOf(field.scalar));
        } else writeScalar(writer, field.number, field.scalar, item);
        break;
      case 'list':
        if (Array.isArray(item)) writeList(writer, field, item);
        break;
      case 'map':
        if (isObject(item)) writeMap(writer, field, item);
        break;
      case 'message':
        if (absent && fact.pointer) continue;
        writeNested(writer, field.number, field.message, absent ? undefined : item);
        break;
      case 'enum':
        break;
    }
  }
}

/** A repeated field: one tagged element after another (null scalars left out, as Go has none). */
function writeList(
  writer: BinaryWriter,
  field: DescField & { fieldKind: 'list' },
  items: readonly Json[],
): void {
  for (const element of items) {
    if (field.listKind === 'message') writeNested(writer, field.number, field.message, element);
    else if (field.listKind === 'scalar' && element !== null)
      writeScalar(writer, field.number, field.scalar, element);
  }
}

/** A map field: one key/value entry message per key, keys sorted as Go's marshaller sorts them. */
function writeMap(
  writer: BinaryWriter,
  field: DescField & { fieldKind: 'map' },
  item: JsonObject,
): void {
  for (const key of Object.keys(item).sort()) {
    const entry = item[key];
    writer.tag(field.number, WireType.LengthDelimited).fork();
    writeScalar(writer, 1, field.mapKey, key);
    if (field.mapKind === 'message') writeNested(writer, 2, field.message, entry);
    else if (field.mapKind === 'scalar')
      writeScalar(writer, 2, field.scalar, entry ?? zeroOf(field.scalar));
    writer.join();
  }
}

function writeNested(
  writer: BinaryWriter,
  number: number,
  message: DescMessage,
  value: Json,
): void {
  writer.tag(number, WireType.LengthDelimited).fork();
  writeSpecial(writer, message, value);
  writer.join();
}

/** The body of one embedded message: the special apimachinery types, else its fields. */
function writeSpecial(writer: BinaryWriter, message: DescMessage, value: Json): void {
  const present = value !== undefined && value !== null;
  switch (message.typeName) {
    case TIME:
    case MICRO_TIME: {
      if (typeof value !== 'string') return; // the zero time marshals to nothing
      const ms = Date.parse(value);
      if (Number.isNaN(ms) || ms === GO_ZERO_TIME_MS) return;
      const seconds = Math.floor(ms / 1000);
      // metav1.Time drops the fraction (time_proto.go); MicroTime keeps microseconds.
      const nanos = message.typeName === TIME ? 0 : microsOf(value, ms) * 1000;
      writer.tag(1, WireType.Varint).int64(seconds).tag(2, WireType.Varint).int32(nanos);
      return;
    }
    case DURATION:
      writer.tag(1, WireType.Varint).int64(typeof value === 'string' ? parseDuration(value) : 0);
      return;
    case INT_OR_STRING: {
      const isString = typeof value === 'string';
      writer
        .tag(1, WireType.Varint)
        .int64(isString ? 1 : 0)
        .tag(2, WireType.Varint)
        .int32(typeof value === 'number' ? value : 0)
        .tag(3, WireType.LengthDelimited)
        .string(isString ? value : '');
      return;
    }
    case QUANTITY:
      writer.tag(1, WireType.LengthDelimited).string(quantityText(value));
      return;
    case RAW_EXTENSION:
    case FIELDS_V1:
      if (present)
        writer.tag(1, WireType.LengthDelimited).bytes(Buffer.from(JSON.stringify(value)));
      return;
    default:
      if (isWrapper(message.typeName)) {
        if (Array.isArray(value))
          for (const item of value) writer.tag(1, WireType.LengthDelimited).string(String(item));
        return;
      }
      writeFields(writer, message, isObject(value) ? value : undefined);
  }
}

function quantityText(value: Json): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return '0';
}

/** 0001-01-01T00:00:00Z, Go's zero time. */
const GO_ZERO_TIME_MS = -62135596800000;

function microsOf(text: string, ms: number): number {
  const fraction = /\.(\d+)/.exec(text)?.[1];
  if (fraction === undefined) return (((ms % 1000) + 1000) % 1000) * 1000;
  return Number(fraction.padEnd(6, '0').slice(0, 6));
}

function zeroOf(scalar: ScalarType): Json {
  switch (scalar) {
    case ScalarType.STRING:
      return '';
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return '';
    default:
      return 0;
  }
}

function writeScalar(writer: BinaryWriter, number: number, scalar: ScalarType, value: Json): void {
  switch (scalar) {
    case ScalarType.STRING:
      writer
        .tag(number, WireType.LengthDelimited)
        .string(typeof value === 'string' ? value : String(value));
      return;
    case ScalarType.BYTES:
      writer
        .tag(number, WireType.LengthDelimited)
        .bytes(typeof value === 'string' ? Buffer.from(value, 'base64') : new Uint8Array());
      return;
    case ScalarType.BOOL:
      writer.tag(number, WireType.Varint).bool(value === true);
      return;
    case ScalarType.INT32:
      writer.tag(number, WireType.Varint).int32(integer(value));
      return;
    case ScalarType.INT64:
      writer.tag(number, WireType.Varint).int64(integer(value));
      return;
    case ScalarType.UINT32:
      writer.tag(number, WireType.Varint).uint32(integer(value));
      return;
    case ScalarType.UINT64:
      writer.tag(number, WireType.Varint).uint64(integer(value));
      return;
    case ScalarType.DOUBLE:
      writer.tag(number, WireType.Bit64).double(Number(value));
      return;
    case ScalarType.FLOAT:
      writer.tag(number, WireType.Bit32).float(Number(value));
      return;
    default:
      throw new ProtobufError(`unsupported scalar type ${scalar}`);
  }
}

function integer(value: Json): number {
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? Math.trunc(number) : 0;
}

// ---------------------------------------------------------------------------------- decoding

/** The JSON form (as the apiserver's encoding/json writes it) of protobuf bytes of `message`. */
export function decodeMessage(message: DescMessage, bytes: Uint8Array): JsonObject {
  try {
    const reader = new BinaryReader(bytes);
    const value = readSpecial(reader, reader.len, message);
    if (!isObject(value)) throw new ProtobufError(`${message.typeName} is not an object in JSON`);
    return value;
  } catch (error: unknown) {
    if (error instanceof ProtobufError) throw error;
    throw new ProtobufError(error instanceof Error ? error.message : String(error));
  }
}

function readSpecial(reader: BinaryReader, end: number, message: DescMessage): Json {
  switch (message.typeName) {
    case TIME:
      return readTime(reader, end, false);
    case MICRO_TIME:
      return readTime(reader, end, true);
    case DURATION:
      return readDuration(reader, end);
    case INT_OR_STRING:
      return readIntOrString(reader, end);
    case QUANTITY:
      return readQuantity(reader, end);
    case RAW_EXTENSION:
    case FIELDS_V1:
      return readRawJson(reader, end, message);
    default:
      if (isWrapper(message.typeName)) return readWrapper(reader, end);
      return readFields(reader, end, message);
  }
}

/** Time (seconds) and MicroTime (seconds, nanos) as RFC 3339; an empty one is the zero time. */
function readTime(reader: BinaryReader, end: number, micro: boolean): Json {
  if (reader.pos >= end) {
    reader.pos = end;
    return null;
  }
  let seconds = 0;
  let nanos = 0;
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) seconds = Number(reader.int64());
    else if (number === 2) nanos = reader.int32();
    else reader.skip(wireType);
  }
  return micro ? rfc3339Micro(seconds, nanos) : rfc3339(seconds);
}

/** Duration (nanoseconds) in Go's time.Duration text. */
function readDuration(reader: BinaryReader, end: number): Json {
  let nanos = 0;
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) nanos = Number(reader.int64());
    else reader.skip(wireType);
  }
  return formatDuration(nanos);
}

/** IntOrString: the string when its type is 1, else the number. */
function readIntOrString(reader: BinaryReader, end: number): Json {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) type = Number(reader.int64());
    else if (number === 2) intVal = reader.int32();
    else if (number === 3) strVal = reader.string();
    else reader.skip(wireType);
  }
  return type === 1 ? strVal : intVal;
}

/** Quantity: its text, `0` when absent. */
function readQuantity(reader: BinaryReader, end: number): Json {
  let text = '0';
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) text = reader.string();
    else reader.skip(wireType);
  }
  return text;
}

/** RawExtension and FieldsV1: the JSON their bytes hold, null when empty. */
function readRawJson(reader: BinaryReader, end: number, message: DescMessage): Json {
  let raw: Uint8Array | undefined;
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) raw = reader.bytes();
    else reader.skip(wireType);
  }
  if (raw === undefined || raw.length === 0) return null;
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8')) as Json;
  } catch {
    throw new ProtobufError(`${message.typeName} does not hold JSON`);
  }
}

/** A named-slice wrapper (`items` strings) as a bare array. */
function readWrapper(reader: BinaryReader, end: number): Json {
  const items: string[] = [];
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    if (number === 1) items.push(reader.string());
    else reader.skip(wireType);
  }
  return items;
}

const byNumberCache = new WeakMap<DescMessage, Map<number, DescField>>();
function fieldByNumber(message: DescMessage, number: number): DescField | undefined {
  let map = byNumberCache.get(message);
  if (map === undefined) {
    map = new Map(message.fields.map((field) => [field.number, field]));
    byNumberCache.set(message, map);
  }
  return map.get(number);
}

function readFields(reader: BinaryReader, end: number, message: DescMessage): JsonObject {
  const values = new Map<DescField, Json>();
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    const field = fieldByNumber(message, number);
    if (field === undefined) {
      reader.skip(wireType);
      continue;
    }
    switch (field.fieldKind) {
      case 'scalar':
        values.set(field, readScalar(reader, field.scalar));
        break;
      case 'message': {
        const length = reader.uint32();
        values.set(field, readSpecial(reader, reader.pos + length, field.message));
        break;
      }
      case 'list': {
        const list = (values.get(field) as Json[] | undefined) ?? [];
        values.set(field, list);
        if (field.listKind === 'message') {
          const length = reader.uint32();
          list.push(readSpecial(reader, reader.pos + length, field.message));
        } else if (field.listKind === 'scalar') {
          if (
            wireType === WireType.LengthDelimited &&
            field.scalar !== ScalarType.STRING &&
            field.scalar !== ScalarType.BYTES
          ) {
            const packedEnd = reader.uint32() + reader.pos;
            while (reader.pos < packedEnd) list.push(readScalar(reader, field.scalar));
          } else list.push(readScalar(reader, field.scalar));
        } else reader.skip(wireType);
        break;
      }
      case 'map': {
        const map = (values.get(field) as JsonObject | undefined) ?? {};
        values.set(field, map);
        const entryEnd = reader.uint32() + reader.pos;
        let key = '';
        let entry: Json;
        while (reader.pos < entryEnd) {
          const [entryNumber, entryWire] = reader.tag();
          if (entryNumber === 1) key = String(readScalar(reader, field.mapKey));
          else if (entryNumber === 2) {
            if (field.mapKind === 'message') {
              const length = reader.uint32();
              entry = readSpecial(reader, reader.pos + length, field.message);
            } else if (field.mapKind === 'scalar') entry = readScalar(reader, field.scalar);
            else reader.skip(entryWire);
          } else reader.skip(entryWire);
        }
        if (entry === undefined) {
          entry =
            field.mapKind === 'message'
              ? readSpecial(new BinaryReader(new Uint8Array()), 0, field.message)
              : field.mapKind === 'scalar'
                ? zeroOf(field.scalar)
                : null;
        }
        map[key] = entry;
        break;
      }
      case 'enum':
        reader.skip(wireType);
        break;
    }
  }
  return toJson(message, values);
}

/** The JSON object encoding/json would write for these field values. */
function toJson(message: DescMessage, values: Map<DescField, Json>): JsonObject {
  const out: JsonObject = {};
  for (const field of message.fields) {
    const fact = goField(message, field);
    if (fact.hidden) continue;
    const value = values.get(field);
    if (fact.inline) {
      const embedded =
        value ?? readSpecial(new BinaryReader(new Uint8Array()), 0, field.message ?? message);
      if (isObject(embedded)) Object.assign(out, embedded);
      continue;
    }
    if (value === undefined) {
      // Not on the wire: the Go zero value, as encoding/json writes it.
      if (fact.pointer) continue;
      if (field.fieldKind === 'scalar') {
        if (!fact.omitempty && field.scalar !== ScalarType.BYTES)
          out[fact.json] = zeroOf(field.scalar);
      } else if (field.fieldKind === 'list' || field.fieldKind === 'map') {
        if (!fact.omitempty) out[fact.json] = null;
      } else if (field.fieldKind === 'message') {
        out[fact.json] = readSpecial(new BinaryReader(new Uint8Array()), 0, field.message);
      }
      continue;
    }
    if (field.fieldKind === 'scalar' && !fact.pointer && fact.omitempty && isZero(value)) continue;
    out[fact.json] = value;
  }
  return out;
}

function isZero(value: Json): boolean {
  return value === '' || value === 0 || value === false;
}

function readScalar(reader: BinaryReader, scalar: ScalarType): Json {
  switch (scalar) {
    case ScalarType.STRING:
      return reader.string();
    case ScalarType.BYTES:
      return Buffer.from(reader.bytes()).toString('base64');
    case ScalarType.BOOL:
      return reader.bool();
    case ScalarType.INT32:
      return reader.int32();
    case ScalarType.INT64:
      return Number(reader.int64());
    case ScalarType.UINT32:
      return reader.uint32();
    case ScalarType.UINT64:
      return Number(reader.uint64());
    case ScalarType.DOUBLE:
      return reader.double();
    case ScalarType.FLOAT:
      return reader.float();
    default:
      throw new ProtobufError(`unsupported scalar type ${scalar}`);
  }
}

/** metav1.Time's JSON: RFC 3339 in UTC, whole seconds. */
function rfc3339(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** metav1.MicroTime's JSON: RFC 3339 in UTC with six fractional digits. */
function rfc3339Micro(seconds: number, nanos: number): string {
  const micros = Math.floor(nanos / 1000);
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;
}
