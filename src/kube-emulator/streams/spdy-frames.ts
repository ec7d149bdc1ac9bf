// SPDY/3 frames, the framing kubectl's streams ride on (k8s.io/apimachinery httpstream/spdy over
// moby/spdystream; "SPDY Protocol - Draft 3", sections 2.2-2.6): a byte-stream parser, frame
// encoders, and the zlib header-block codec with the protocol's fixed dictionary (section
// 2.6.10.1). No maintained SPDY library exists for Node (docs/adr/0012), so this is our own,
// limited to what a server of kubectl's streams needs.
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

export const FrameType = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;

export const FLAG_FIN = 0x01;

/** RST_STREAM status codes (section 2.4.2). */
export const RstStatus = {
  protocolError: 1,
  invalidStream: 2,
  refusedStream: 3,
  cancel: 5,
} as const;

export type Frame =
  | { control: true; type: number; flags: number; payload: Buffer }
  | { control: false; streamId: number; flags: number; data: Buffer };

/** Splits a byte stream into frames; chunks may cut frames anywhere. */
export class FrameParser {
  #buffer: Buffer = Buffer.alloc(0);

  /** Feeds bytes; returns every frame now complete. Throws on a frame of another version. */
  push(chunk: Buffer): Frame[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: Frame[] = [];
    while (this.#buffer.length >= 8) {
      const length = this.#buffer.readUIntBE(5, 3);
      if (this.#buffer.length < 8 + length) break;
      const flags = this.#buffer[4] ?? 0;
      const payload = this.#buffer.subarray(8, 8 + length);
      const first = this.#buffer.readUInt32BE(0);
      if ((first & 0x80000000) !== 0) {
        const version = (first >>> 16) & 0x7fff;
        if (version !== 3) throw new Error(`SPDY version ${version} is not supported`);
        frames.push({ control: true, type: first & 0xffff, flags, payload });
      } else {
        frames.push({ control: false, streamId: first & 0x7fffffff, flags, data: payload });
      }
      this.#buffer = this.#buffer.subarray(8 + length);
    }
    return frames;
  }
}

export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt16BE(0x8003, 0);
  header.writeUInt16BE(type, 2);
  header.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([header, payload]);
}

export function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(streamId & 0x7fffffff, 0);
  header.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
  return Buffer.concat([header, data]);
}

export function uint32s(...values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => buffer.writeUInt32BE(value >>> 0, i * 4));
  return buffer;
}

/**
 * The header-compression dictionary of SPDY/3: these header names, each preceded by its length
 * as a 32-bit integer, then the common values as one run of text (1423 bytes; its Adler-32,
 * which the zlib stream carries as DICTID, is 0xe3c6a7c2).
 */
// prettier-ignore
const DICTIONARY_NAMES = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset',
  'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow', 'authorization',
  'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language',
  'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date',
  'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match',
  'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
  'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te',
  'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public',
  'set-cookie', 'keep-alive', 'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

export const HEADER_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_NAMES.flatMap((name) => [uint32s(name.length), Buffer.from(name, 'latin1')]),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** Header names (lower case) to their values (several values of one name are NUL-separated). */
export type SpdyHeaders = Map<string, string[]>;

function encodeBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [uint32s(headers.size)];
  for (const [name, values] of headers) {
    const key = Buffer.from(name.toLowerCase(), 'utf8');
    const value = Buffer.from(values.join('\0'), 'utf8');
    parts.push(uint32s(key.length), key, uint32s(value.length), value);
  }
  return Buffer.concat(parts);
}

function decodeBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = new Map();
  let offset = 0;
  const read = (): Buffer => {
    const length = block.readUInt32BE(offset);
    const value = block.subarray(offset + 4, offset + 4 + length);
    if (value.length !== length) throw new Error('truncated SPDY header block');
    offset += 4 + length;
    return value;
  };
  const count = block.readUInt32BE(0);
  offset = 4;
  for (let i = 0; i < count; i++) {
    const name = read().toString('utf8').toLowerCase();
    const values = read().toString('utf8').split('\0');
    headers.set(name, [...(headers.get(name) ?? []), ...values]);
  }
  return headers;
}

/** Runs zlib work one call at a time, in order, through one stream kept for the session. */
function flushThrough(stream: Deflate | Inflate, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
    };
    const onError = (error: Error): void => {
      stream.off('data', onData);
      reject(error);
    };
    stream.on('data', onData);
    stream.once('error', onError);
    stream.write(input);
    stream.flush(constants.Z_SYNC_FLUSH, () => {
      stream.off('data', onData);
      stream.off('error', onError);
      resolve(Buffer.concat(chunks));
    });
  });
}

/**
 * The two compression contexts of a session (one per direction, kept for its whole life, as the
 * protocol requires): header blocks of the peer's frames in, of ours out.
 */
export class HeaderCodec {
  readonly #inflate = createInflate({ dictionary: HEADER_DICTIONARY });
  readonly #deflate = createDeflate({ dictionary: HEADER_DICTIONARY });
  #inChain: Promise<unknown> = Promise.resolve();
  #outChain: Promise<unknown> = Promise.resolve();

  decode(compressed: Buffer): Promise<SpdyHeaders> {
    const next = this.#inChain.then(async () =>
      decodeBlock(await flushThrough(this.#inflate, compressed)),
    );
    this.#inChain = next.catch(() => undefined);
    return next;
  }

  encode(headers: SpdyHeaders): Promise<Buffer> {
    const next = this.#outChain.then(() => flushThrough(this.#deflate, encodeBlock(headers)));
    this.#outChain = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.#inflate.destroy();
    this.#deflate.destroy();
  }
}
