// SPDY/3 framing: the header dictionary is the protocol's (length and Adler-32, the DICTID Go's
// zlib reader checks), frames survive any cut of the byte stream, header blocks round-trip
// through two compression contexts in step, and a frame of another version is refused.
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  controlFrame,
  dataFrame,
  FrameParser,
  FrameType,
  HEADER_DICTIONARY,
  HeaderCodec,
  uint32s,
  type SpdyHeaders,
} from '../../src/kube-emulator/streams/spdy-frames.ts';

function adler32(bytes: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

describe('SPDY/3 frames', () => {
  it('uses the dictionary of the SPDY/3 draft (1423 bytes, Adler-32 0xe3c6a7c2)', () => {
    expect(HEADER_DICTIONARY.length).toBe(1423);
    expect(adler32(HEADER_DICTIONARY)).toBe(0xe3c6a7c2);
    // A zlib stream made with it names that DICTID in its header (bytes 2-5).
    const stream = deflateSync(Buffer.from('x'), { dictionary: HEADER_DICTIONARY });
    expect(stream.readUInt32BE(2)).toBe(0xe3c6a7c2);
  });

  it('parses frames however the byte stream is cut, and refuses another version', () => {
    const bytes = Buffer.concat([
      controlFrame(FrameType.ping, 0, uint32s(7)),
      dataFrame(3, 1, Buffer.from('hello')),
      dataFrame(5, 0, Buffer.alloc(0)),
      controlFrame(FrameType.rstStream, 0, uint32s(3, 5)),
    ]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parser = new FrameParser();
      const frames = [...parser.push(bytes.subarray(0, cut)), ...parser.push(bytes.subarray(cut))];
      expect(frames).toEqual([
        { control: true, type: FrameType.ping, flags: 0, payload: uint32s(7) },
        { control: false, streamId: 3, flags: 1, data: Buffer.from('hello') },
        { control: false, streamId: 5, flags: 0, data: Buffer.alloc(0) },
        { control: true, type: FrameType.rstStream, flags: 0, payload: uint32s(3, 5) },
      ]);
    }
    const v2 = Buffer.from(controlFrame(FrameType.ping, 0, uint32s(1)));
    v2.writeUInt16BE(0x8002, 0);
    expect(() => new FrameParser().push(v2)).toThrow('SPDY version 2 is not supported');
  });

  it('round-trips header blocks through one compression context per direction', async () => {
    const out = new HeaderCodec();
    const into = new HeaderCodec();
    const blocks: SpdyHeaders[] = [
      new Map([
        ['streamtype', ['error']],
        ['port', ['50832']],
        ['requestid', ['0']],
      ]),
      new Map([
        ['streamtype', ['data']],
        ['port', ['50832']],
        ['requestid', ['0']],
      ]),
      new Map(),
      new Map([['x-multi', ['a', 'b']]]),
    ];
    for (const headers of blocks) {
      const compressed = await out.encode(headers);
      expect(await into.decode(compressed)).toEqual(headers);
    }
    out.close();
    into.close();
  });
});
