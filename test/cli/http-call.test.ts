// The command-line tools' HTTP exchange (src/cli/http-call.ts) against a real loopback server:
// header values as fetch sends them (a token read from a file ends with a newline: k8s/base's
// kustomize Secret does, and the preStop hooks of that layout stopped answering when it went
// through node:http as is), a refused header as an error, the socket's error, and an abort.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCall } from '../../src/cli/http-call.ts';

let server: Server;
let url: string;
const seen: { authorization?: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        authorization: request.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (request.url === '/slow') return; // never answers
      response.setHeader('content-type', 'application/json');
      response.end('{"ok":"é"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('httpCall', () => {
  it('sends a token read from a file (trailing newline) as fetch does, and reads the body as UTF-8', async () => {
    const reply = await httpCall({
      url: `${url}/v1/x`,
      method: 'POST',
      headers: { authorization: 'Bearer token-not-secret\n', 'content-type': 'application/json' },
      body: '{"a":1}',
      signal: AbortSignal.timeout(5_000),
    });
    expect(reply).toEqual({ status: 200, text: '{"ok":"é"}' });
    expect(seen.at(-1)).toEqual({ authorization: 'Bearer token-not-secret', body: '{"a":1}' });
  });

  it('rejects a header value with a newline inside, and a refused connection, with an error', async () => {
    await expect(
      httpCall({
        url,
        method: 'GET',
        headers: { authorization: 'Bearer a\nb' },
        signal: AbortSignal.timeout(5_000),
      }),
    ).rejects.toThrow(/header/i);
    await expect(
      httpCall({
        url: 'http://127.0.0.1:9/',
        method: 'GET',
        headers: {},
        signal: AbortSignal.timeout(5_000),
      }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it("rejects with the signal's reason once it aborts", async () => {
    const reason = new Error('stop');
    const controller = new AbortController();
    const call = httpCall({
      url: `${url}/slow`,
      method: 'GET',
      headers: {},
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(reason), 50);
    await expect(call).rejects.toBe(reason);
  });
});
