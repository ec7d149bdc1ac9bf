// The debug CLI's reading of GET /v1/events (src/manager/cli/event-stream.ts): named events with
// JSON data, however the bytes are cut into chunks; comments (the heartbeat), `retry:` and
// unnamed data are not events of ours.
import { describe, expect, it } from 'vitest';
import { printable, readEventStream } from '../../src/manager/cli/event-stream.ts';
import { CliError } from '../../src/cli/program.ts';

async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) {
    await Promise.resolve();
    yield bytes.slice(i, i + size);
  }
}

async function read(text: string, size: number) {
  const out = [];
  for await (const event of readEventStream(chunks(text, size))) out.push(event);
  return out;
}

const STREAM =
  'retry: 2000\n\n' +
  'event: hello\ndata: {"height":7,"paused":false,"trusted":true}\n\n' +
  ': heartbeat\n\n' +
  'data: {"unnamed":true}\n\n' +
  'event: phase\r\ndata: {"key":"001","to":"active","reason":"signing – ✓"}\r\n\r\n' +
  'event: height\ndata: {"height":8}\n\n' +
  'event: height\ndata: {"height":9}';

describe('readEventStream', () => {
  it.each([1, 3, 7, 64, 4096])('yields the named events in chunks of %i bytes', async (size) => {
    expect(await read(STREAM, size)).toEqual([
      { event: 'hello', data: { height: 7, paused: false, trusted: true } },
      { event: 'phase', data: { key: '001', to: 'active', reason: 'signing – ✓' } },
      { event: 'height', data: { height: 8 } },
    ]);
  });

  it('names data that is not JSON (exit 1), without a raw SyntaxError', async () => {
    const reading = read('event: phase\ndata: {nope\n\n', 16);
    await expect(reading).rejects.toThrow(CliError);
    await expect(read('event: phase\ndata: {nope\n\n', 16)).rejects.toThrow(
      /sent a "phase" event whose data is not JSON/,
    );
  });

  it('writes control characters as escapes', () => {
    expect(printable('a\u001b]0;pwned\u0007b\u009bc')).toBe('a\\u001b]0;pwned\\u0007b\\u009bc');
  });
});
