// The server end of a SPDY/3.1 session as moby/spdystream's client expects it: the client opens
// streams (SYN_STREAM with headers such as `streamtype` and `port`), the server answers each with
// SYN_REPLY before any data, PINGs are echoed, GOAWAY or the end of the transport ends it all.
// Flow control is not enforced (spdystream ignores WINDOW_UPDATE and SETTINGS too). The transport
// is a raw socket (HTTP Upgrade: SPDY/3.1) or a WebSocket carrying the same bytes (kubectl 1.31+'s
// `SPDY/3.1+portforward.k8s.io` tunnel).
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import {
  controlFrame,
  dataFrame,
  FLAG_FIN,
  FrameParser,
  FrameType,
  HeaderCodec,
  RstStatus,
  uint32s,
  type Frame,
  type SpdyHeaders,
} from './spdy-frames.ts';

/** The bytes a session runs over. */
export interface ByteTransport {
  write(chunk: Buffer): void;
  /** Ends the connection (the session is over). */
  close(): void;
  onData(listener: (chunk: Buffer) => void): void;
  onClose(listener: () => void): void;
}

/**
 * One client-opened stream: readable (the client's data, ended by its FIN) and writable (our
 * data; `end()` sends our FIN). Data written before `reply()` waits behind the SYN_REPLY.
 */
export class SpdyStream extends Duplex {
  readonly id: number;
  readonly headers: SpdyHeaders;
  readonly #session: SpdySession;
  #wasReset = false;

  constructor(session: SpdySession, id: number, headers: SpdyHeaders) {
    super({ allowHalfOpen: true });
    this.#session = session;
    this.id = id;
    this.headers = headers;
  }

  /** The first value of a header (names are lower case on the wire). */
  header(name: string): string | undefined {
    return this.headers.get(name.toLowerCase())?.[0];
  }

  /** Accepts the stream (SYN_REPLY with no headers). */
  reply(): void {
    this.#session.send(
      this.#session.codec
        .encode(new Map())
        .then((block) =>
          controlFrame(FrameType.synReply, 0, Buffer.concat([uint32s(this.id), block])),
        ),
    );
  }

  /** Refuses or aborts the stream (RST_STREAM). */
  reset(status: number = RstStatus.cancel): void {
    if (this.#wasReset) return;
    this.#wasReset = true;
    this.#session.send(controlFrame(FrameType.rstStream, 0, uint32s(this.id, status)));
    this.destroy();
  }

  /** The peer reset the stream. */
  remoteReset(): void {
    this.#wasReset = true;
    this.destroy();
  }

  override _read(): void {
    // Data is pushed as frames arrive; the protocol has no way to ask the peer to wait.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error) => void): void {
    if (!this.#wasReset) this.#session.send(dataFrame(this.id, 0, chunk));
    done();
  }

  override _final(done: (error?: Error) => void): void {
    if (!this.#wasReset) this.#session.send(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    done();
  }
}

/**
 * Emits `stream` (a SpdyStream) for each stream the client opens and `close` once, when the
 * transport ends or either side goes away.
 */
export class SpdySession extends EventEmitter<{ stream: [SpdyStream]; close: [] }> {
  readonly codec = new HeaderCodec();
  readonly #transport: ByteTransport;
  readonly #parser = new FrameParser();
  readonly #streams = new Map<number, SpdyStream>();
  #input: Promise<void> = Promise.resolve();
  #output: Promise<void> = Promise.resolve();
  #lastStreamId = 0;
  #closed = false;

  constructor(transport: ByteTransport) {
    super();
    this.#transport = transport;
    transport.onData((chunk) => {
      let frames: Frame[];
      try {
        frames = this.#parser.push(chunk);
      } catch {
        this.close();
        return;
      }
      for (const frame of frames) {
        this.#input = this.#input.then(() => this.#handle(frame)).catch(() => this.close());
      }
    });
    transport.onClose(() => this.#finish());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes a frame after every frame queued before it (some are still being compressed). */
  send(frame: Buffer | Promise<Buffer>): void {
    if (this.#closed) return;
    this.#output = this.#output
      .then(async () => {
        const bytes = await frame;
        if (!this.#closed) this.#transport.write(bytes);
      })
      .catch(() => this.close());
  }

  /** Sends GOAWAY after the queued frames and ends the transport. */
  close(): void {
    if (this.#closed) return;
    this.send(controlFrame(FrameType.goAway, 0, uint32s(this.#lastStreamId, 0)));
    void this.#output.then(() => {
      this.#transport.close();
      this.#finish();
    });
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of this.#streams.values()) stream.destroy();
    this.#streams.clear();
    this.codec.close();
    this.emit('close');
  }

  async #handle(frame: Frame): Promise<void> {
    if (this.#closed) return;
    if (!frame.control) {
      const stream = this.#streams.get(frame.streamId);
      if (stream === undefined) return;
      if (frame.data.length > 0) stream.push(frame.data);
      if ((frame.flags & FLAG_FIN) !== 0) stream.push(null);
      return;
    }
    const { payload } = frame;
    switch (frame.type) {
      case FrameType.synStream: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const headers = await this.codec.decode(payload.subarray(10));
        if (id <= this.#lastStreamId || id % 2 === 0) {
          this.send(controlFrame(FrameType.rstStream, 0, uint32s(id, RstStatus.protocolError)));
          return;
        }
        this.#lastStreamId = id;
        const stream = new SpdyStream(this, id, headers);
        this.#streams.set(id, stream);
        stream.once('close', () => this.#streams.delete(id));
        if ((frame.flags & FLAG_FIN) !== 0) stream.push(null);
        this.emit('stream', stream);
        return;
      }
      case FrameType.headers:
        await this.codec.decode(payload.subarray(4)); // keeps the compression context in step
        return;
      case FrameType.rstStream:
        this.#streams.get(payload.readUInt32BE(0) & 0x7fffffff)?.remoteReset();
        return;
      case FrameType.ping:
        // Client pings have odd ids; echo them (spdystream's rule for the other side's pings).
        if ((payload.readUInt32BE(0) & 1) === 1)
          this.send(controlFrame(FrameType.ping, 0, payload));
        return;
      case FrameType.goAway:
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (we open no streams): nothing to do.
        return;
    }
  }
}
