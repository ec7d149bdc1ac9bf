// The apiserver's protobuf wire forms: `k8s\0` + runtime.Unknown around an object
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go, doEncode/Decode), and the
// length-prefixed metav1.WatchEvent frames of a watch stream (the raw serializer and
// LengthDelimitedFramer: a 4-byte big-endian length, then the event without the envelope,
// whose `object.raw` is the enveloped object).
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { decodeMessage, encodeMessage, ProtobufError } from './codec.ts';
import { messageFor } from './registry.ts';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const PROTOBUF_WATCH = 'application/vnd.kubernetes.protobuf;stream=watch';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type JsonObject = Record<string, unknown>;

/** Whether `object` (with apiVersion and kind) has a protobuf form. */
export function hasProtobuf(object: JsonObject): boolean {
  return (
    typeof object.apiVersion === 'string' &&
    typeof object.kind === 'string' &&
    messageFor(object.apiVersion, object.kind) !== undefined
  );
}

/**
 * `k8s\0` + Unknown{typeMeta, raw, contentEncoding: '', contentType: ''} of `object`; `as`
 * names the type of an object whose JSON carries none (a WatchEvent), written with an empty
 * typeMeta as Go writes it.
 */
export function encodeObject(
  object: JsonObject,
  as?: { apiVersion: string; kind: string },
): Uint8Array {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const message = messageFor(as?.apiVersion ?? apiVersion, as?.kind ?? kind);
  if (message === undefined) throw new ProtobufError(`no protobuf form for ${apiVersion} ${kind}`);
  const raw = encodeMessage(message, object);
  const writer = new BinaryWriter();
  writer.raw(MAGIC);
  writer
    .tag(1, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.LengthDelimited)
    .string(apiVersion)
    .tag(2, WireType.LengthDelimited)
    .string(kind)
    .join();
  writer.tag(2, WireType.LengthDelimited).bytes(raw);
  writer.tag(3, WireType.LengthDelimited).string('');
  writer.tag(4, WireType.LengthDelimited).string('');
  return writer.finish();
}

/**
 * The JSON object (with apiVersion and kind) in an enveloped protobuf body; `as` is the type
 * to read when the envelope names none (then the object gets no apiVersion and kind).
 */
export function decodeObject(
  body: Uint8Array,
  as?: { apiVersion: string; kind: string },
): JsonObject {
  if (body.length < MAGIC.length || !MAGIC.equals(body.subarray(0, MAGIC.length))) {
    throw new ProtobufError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  }
  const reader = new BinaryReader(body.subarray(MAGIC.length));
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  let contentEncoding = '';
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    if (number === 1) {
      const end = reader.uint32() + reader.pos;
      while (reader.pos < end) {
        const [inner, innerWire] = reader.tag();
        if (inner === 1) apiVersion = reader.string();
        else if (inner === 2) kind = reader.string();
        else reader.skip(innerWire);
      }
    } else if (number === 2) raw = reader.bytes();
    else if (number === 3) contentEncoding = reader.string();
    else reader.skip(wireType);
  }
  if (contentEncoding !== '')
    throw new ProtobufError(`unsupported content encoding ${contentEncoding}`);
  if (kind === '' && as !== undefined) {
    const named = messageFor(as.apiVersion, as.kind);
    if (named !== undefined) return decodeMessage(named, raw);
  }
  const message = messageFor(apiVersion, kind);
  if (message === undefined) {
    throw new ProtobufError(`no kind "${kind}" is registered for version "${apiVersion}"`);
  }
  return { apiVersion, kind, ...decodeMessage(message, raw) };
}

/** One frame of a protobuf watch stream: length, then WatchEvent{type, object{raw}}. */
export function watchFrame(type: string, object: JsonObject): Uint8Array {
  const writer = new BinaryWriter();
  writer
    .tag(1, WireType.LengthDelimited)
    .string(type)
    .tag(2, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.LengthDelimited)
    .bytes(encodeObject(object))
    .join();
  const event = writer.finish();
  const frame = new Uint8Array(4 + event.length);
  new DataView(frame.buffer).setUint32(0, event.length);
  frame.set(event, 4);
  return frame;
}

/** Reads the frames of a protobuf watch stream (for tests): [type, object] pairs. */
export function readWatchFrames(stream: Uint8Array): { type: string; object: JsonObject }[] {
  const events: { type: string; object: JsonObject }[] = [];
  let offset = 0;
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  while (offset + 4 <= stream.length) {
    const length = view.getUint32(offset);
    const reader = new BinaryReader(stream.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
    let type = '';
    let raw: Uint8Array = new Uint8Array();
    while (reader.pos < reader.len) {
      const [number, wireType] = reader.tag();
      if (number === 1) type = reader.string();
      else if (number === 2) {
        const end = reader.uint32() + reader.pos;
        while (reader.pos < end) {
          const [inner, innerWire] = reader.tag();
          if (inner === 1) raw = reader.bytes();
          else reader.skip(innerWire);
        }
      } else reader.skip(wireType);
    }
    events.push({ type, object: decodeObject(raw) });
  }
  return events;
}
