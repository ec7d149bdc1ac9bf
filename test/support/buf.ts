// Runs `buf convert` (Go protobuf) on the repo's .proto files: an independent encoder/decoder.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const buf = fileURLToPath(new URL('../../node_modules/.bin/buf', import.meta.url));

async function convert(type: string, input: Buffer, from: string, to: string): Promise<Buffer> {
  const child = run(
    buf,
    ['convert', '.', '--type', type, '--from', `-#format=${from}`, '--to', `-#format=${to}`],
    {
      cwd: repoRoot,
      encoding: 'buffer',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  child.child.stdin?.end(input);
  const { stdout } = await child;
  return stdout;
}

/** Decodes binary protobuf of `type` to protobuf JSON with buf. */
export async function bufDecode(type: string, bytes: Uint8Array): Promise<unknown> {
  const json = await convert(type, Buffer.from(bytes), 'binpb', 'json');
  return JSON.parse(json.toString('utf8'));
}

/** Encodes protobuf JSON of `type` to binary with buf. */
export async function bufEncode(type: string, json: unknown): Promise<Uint8Array> {
  return new Uint8Array(await convert(type, Buffer.from(JSON.stringify(json)), 'json', 'binpb'));
}

/** Decodes binary protobuf of `type` and encodes it again with buf (Go's marshal). */
export async function bufReencode(type: string, bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await convert(type, Buffer.from(bytes), 'binpb', 'binpb'));
}
