// The control RPC of `cluster-manager run` on a real socket: the token read from a Secret file,
// the server-sent event stream followed with fetch, a scale whose client goes away, and streams
// ended when the service stops.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../src/manager/run.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { EventReader } from './support/event-reader.ts';
import {
  SERVICE_URL_TEMPLATE,
  startControlFixture,
  type ControlFixture,
} from './support/control-fixture.ts';

const FILE_TOKEN = 'token-from-a-secret-file-0123456789';
let fixture: ControlFixture;
let service: RunningService;
let url: string;

async function post(
  path: string,
  body: unknown,
  options: { token?: string; signal?: AbortSignal } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${options.token ?? FILE_TOKEN}`,
    },
    body: JSON.stringify(body),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  fixture = await startControlFixture();
  const tokenFile = join(fixture.dir, 'rpc-token');
  await writeFile(tokenFile, `${FILE_TOKEN}\n`, { mode: 0o600 });
  service = await startService({
    env: {
      KUBECONFIG: join(fixture.dir, 'kubeconfig'),
      CM_NAMESPACE: fixture.namespace,
      CM_CHAIN_RPC_URL: fixture.chain.baseUrl,
      CM_SERVICE_URL_TEMPLATE: SERVICE_URL_TEMPLATE,
      CM_JOURNAL_PATH: join(fixture.dir, 'service-journal.sqlite'),
      CM_READY_DEBOUNCE: '50ms',
      CM_CHAIN_POLL_INTERVAL: '100ms',
      CM_SYNC_CHECK: 'false',
      CM_PACING: 'off',
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: '0',
      CM_RPC_TOKEN_FILE: tokenFile,
      CM_LOG_LEVEL: 'silent',
      CM_SHUTDOWN_TIMEOUT: '2s',
    },
  });
  url = service.rpcUrl ?? '';
  await waitFor(
    async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : pending('not ready')),
    {
      what: 'the service to be ready',
    },
  );
});

afterAll(async () => {
  await service.stop();
  await fixture.stop();
});

describe('the listening control RPC', () => {
  it('listens on loopback and takes the token from CM_RPC_TOKEN_FILE', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await post('/v1/pause', {}, { token: 'some-other-token-0123456789' })).status).toBe(
      401,
    );
    expect(await post('/v1/pause', {})).toEqual({ status: 200, body: { paused: true } });
    expect(await post('/v1/resume', {})).toEqual({ status: 200, body: { paused: false } });
  });

  it('streams hello, then pause, phase, action and height events as they happen', async () => {
    const { reader, contentType } = await EventReader.open(url, FILE_TOKEN);
    try {
      expect(contentType).toMatch(/^text\/event-stream/);
      const hello = await reader.next((e) => e.event === 'hello', { what: 'hello' });
      expect(hello.data).toMatchObject({ paused: false });

      await post('/v1/pause', {});
      await reader.next((e) => e.event === 'paused' && e.data.paused === true, {
        what: 'paused: true',
      });
      await post('/v1/resume', {});
      await reader.next((e) => e.event === 'paused' && e.data.paused === false, {
        what: 'paused: false',
      });

      const mark = reader.events.length;
      const scaled = await post('/v1/scale', {
        replicas: 2,
        wait: 'active',
        drive: true,
        timeoutSeconds: 60,
      });
      expect(scaled.status).toBe(200);
      const sent = await reader.next(
        (e) => e.event === 'action' && e.data.validatorId === '002' && e.data.state === 'sent',
        { from: mark, what: 'the stake of 002 sent' },
      );
      expect(sent.data).toMatchObject({ kind: 'stake', txHash: expect.any(String) as unknown });
      const committed = await reader.next(
        (e) => e.event === 'action' && e.data.validatorId === '002' && e.data.state === 'committed',
        { from: mark, what: 'the stake of 002 committed' },
      );
      const block = await fixture.chain.block(committed.data.height as number);
      expect(block.transactions?.map((t) => t.tx.hash)).toContain(sent.data.txHash);
      await reader.next(
        (e) => e.event === 'phase' && e.data.id === '002' && e.data.to === 'active',
        {
          from: mark,
          what: '002 becoming active',
        },
      );
      await reader.next((e) => e.event === 'height', { from: mark, what: 'a height' });
      const phases = reader.events
        .slice(mark)
        .filter((e) => e.event === 'phase' && e.data.id === '002')
        .map((e) => e.data.to);
      expect(phases.indexOf('staking')).toBeLessThan(phases.indexOf('active'));
    } finally {
      reader.close();
      await reader.done;
    }
  });

  it('lets a scale go when its client goes away, so the next one is not refused', async () => {
    const scaler = service.manager;
    const client = new AbortController();
    // No block comes on this chain (manual pacemaker, no --drive): the wait goes on until the
    // manager calls it blocked (10 s without a block) or the client goes away.
    const hanging = post(
      '/v1/scale',
      { replicas: 2, wait: 'active', timeoutSeconds: 120 },
      { signal: client.signal },
    ).catch((error: unknown) => error);
    await waitFor(
      async () => {
        const replicas = await fixture.replicas();
        return replicas === 2 ? true : pending(`replicas ${replicas}`);
      },
      { what: 'the first scale to patch the replicas' },
    );
    client.abort();
    expect(await hanging).toBeInstanceOf(Error);
    await waitFor(
      async () => {
        const { status } = await post('/v1/scale', { replicas: 1, wait: 'none' });
        return status === 409
          ? pending('still in progress')
          : status === 202 || status === 200
            ? true
            : pending(`HTTP ${status}`);
      },
      { what: 'the next scale to be taken', timeoutMs: 5_000 },
    );
    expect(scaler.paused).toBe(false);
  });

  it('ends open event streams when the service stops', async () => {
    const { reader } = await EventReader.open(url, FILE_TOKEN);
    await reader.next((e) => e.event === 'hello', { what: 'hello' });
    await service.stop();
    await reader.done;
    expect(reader.ended).toBe(true);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
