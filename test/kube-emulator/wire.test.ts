// The emulator on the wire, over raw HTTP: query parameters as apimachinery converts them,
// Accept negotiation (406, YAML, PartialObjectMetadata), request option validation, the 3 MiB
// body limit, protobuf requests, responses and watch frames, and a watcher that never reads.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  decodeObject,
  encodeObject,
  readWatchFrames,
} from '../../src/kube-emulator/protobuf/envelope.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { startHarness } from './harness.ts';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request; resolves with the whole answer (for watches: after `untilBytes` arrive). */
function send(
  url: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: Uint8Array | string;
    untilBytes?: number;
  },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${options.path}`,
      { method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (): void =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          });
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (options.untilBytes !== undefined && size >= options.untilBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function json(answer: RawAnswer): Record<string, unknown> {
  return JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
}

describe('query parameters, as apimachinery converts them', () => {
  it('streams a watch for watch=True (the Python client) and for an empty watch=, and lists for watch=0 and watch=FALSE', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'a' } },
    });
    for (const value of ['True', 'TRUE', 't', '', 'yes']) {
      const answer = await send(h.emulator.url, {
        path: `/api/v1/namespaces/default/configmaps?watch=${value}`,
        untilBytes: 1,
      });
      expect(answer.status, `watch=${value}`).toBe(200);
      const first = JSON.parse(answer.body.toString('utf8').split('\n')[0] ?? '') as {
        type: string;
      };
      expect(first.type, `watch=${value}`).toBe('ADDED');
    }
    for (const value of ['0', 'false', 'FALSE', 'False', 'fAlSe']) {
      const answer = await send(h.emulator.url, {
        path: `/api/v1/namespaces/default/configmaps?watch=${value}`,
      });
      expect(json(answer).kind, `watch=${value}`).toBe('ConfigMapList');
    }
  });

  it('answers 400 with strconv.ParseInt text for integers Go cannot parse', async () => {
    const h = await startHarness({ kubelet: false });
    for (const [query, text] of [
      ['limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
      ['watch=1&timeoutSeconds=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
      [
        'limit=9223372036854775808',
        'strconv.ParseInt: parsing "9223372036854775808": value out of range',
      ],
    ] as const) {
      const answer = await send(h.emulator.url, {
        path: `/api/v1/namespaces/default/pods?${query}`,
      });
      expect(answer.status, query).toBe(400);
      expect(json(answer)).toMatchObject({ reason: 'BadRequest', message: text, code: 400 });
    }
    const deleted = await send(h.emulator.url, {
      method: 'DELETE',
      path: '/api/v1/namespaces/default/pods/x?gracePeriodSeconds=soon',
    });
    expect(deleted.status).toBe(400);
    const ok = await send(h.emulator.url, { path: '/api/v1/namespaces/default/pods?limit=%2B2' });
    expect(ok.status).toBe(200);
  });

  it('refuses dryRun=Foo and an unknown fieldValidation with 422 and creates nothing', async () => {
    const h = await startHarness({ kubelet: false });
    const body = JSON.stringify({ metadata: { name: 'dry' } });
    const refused = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps?dryRun=Foo',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(refused.status).toBe(422);
    expect(json(refused)).toMatchObject({
      reason: 'Invalid',
      message:
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Foo"}: supported values: "All"',
      details: {
        group: 'meta.k8s.io',
        kind: 'CreateOptions',
        causes: [{ reason: 'FieldValueNotSupported', field: 'dryRun' }],
      },
    });
    const strictish = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps?fieldValidation=strict',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(strictish.status).toBe(422);
    expect(json(strictish).message).toContain('fieldValidation: Unsupported value: "strict"');
    expect(h.emulator.store.get('/configmaps', 'default', 'dry')).toBeUndefined();
    const dry = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps?dryRun=All',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(dry.status).toBe(201);
    expect(h.emulator.store.get('/configmaps', 'default', 'dry')).toBeUndefined();
  });

  it('answers a watch from a resourceVersion storage cannot parse as the apiserver does: 500, no reason', async () => {
    const h = await startHarness({ kubelet: false });
    const answer = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/pods?watch=true&resourceVersion=cool',
    });
    expect(answer.status).toBe(500);
    const status = json(answer);
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'resourceVersion: Invalid value: "cool": strconv.ParseUint: parsing "cool": invalid syntax',
      code: 500,
    });
  });
});

describe('content negotiation', () => {
  it('answers 406 with the accepted media types for an Accept it cannot serve, and JSON when there is no Accept', async () => {
    const h = await startHarness({ kubelet: false });
    const refused = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/pods',
      headers: { accept: 'application/xml' },
    });
    expect(refused.status).toBe(406);
    expect(json(refused)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      reason: 'NotAcceptable',
      code: 406,
    });
    const watchYaml = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/pods?watch=1',
      headers: { accept: 'application/yaml' },
    });
    expect(watchYaml.status).toBe(406);
    expect(json(watchYaml).message).toBe(
      'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch',
    );
    const plain = await send(h.emulator.url, { path: '/api/v1/namespaces/default/pods' });
    expect(plain.headers['content-type']).toBe('application/json');
  });

  it('answers YAML when asked, falls through unusable clauses, and honours q', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'y' }, data: { k: 'v' } },
    });
    const yaml = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps/y',
      headers: { accept: 'text/html, application/yaml' },
    });
    expect(yaml.headers['content-type']).toBe('application/yaml');
    expect(parseYaml(yaml.body.toString('utf8'))).toMatchObject({
      kind: 'ConfigMap',
      data: { k: 'v' },
    });
    const preferred = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps/y',
      headers: { accept: 'application/json;q=0.5, application/yaml' },
    });
    expect(preferred.headers['content-type']).toBe('application/yaml');
    // Table has no protobuf form: that clause is skipped, the next one serves.
    const table = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps',
      headers: { accept: `${PROTOBUF};as=Table;v=v1;g=meta.k8s.io, application/json` },
    });
    expect(json(table).kind).toBe('ConfigMapList');
  });

  it('converts to PartialObjectMetadata and PartialObjectMetadataList, and refuses the wrong one with 406', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'p', labels: { a: 'b' } }, data: { secret: 'not in metadata' } },
    });
    const list = json(
      await send(h.emulator.url, {
        // every namespace also holds kube-root-ca.crt, as on a real cluster
        path: '/api/v1/namespaces/default/configmaps?labelSelector=a%3Db',
        headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
      }),
    );
    expect(list).toMatchObject({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      items: [
        {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'p', labels: { a: 'b' } },
        },
      ],
    });
    expect(JSON.stringify(list)).not.toContain('not in metadata');
    const one = json(
      await send(h.emulator.url, {
        path: '/api/v1/namespaces/default/configmaps/p',
        headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
      }),
    );
    expect(one).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'p' } });
    expect(one.data).toBeUndefined();
    const wrong = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps',
      headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    expect(wrong.status).toBe(406);
    expect(json(wrong).message).toBe(
      'you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)',
    );
    const watch = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps?watch=1&labelSelector=a%3Db',
      headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
      untilBytes: 1,
    });
    expect(JSON.parse(watch.body.toString('utf8').split('\n')[0] ?? '')).toMatchObject({
      type: 'ADDED',
      object: { kind: 'PartialObjectMetadata', metadata: { name: 'p' } },
    });
  });
});

describe('request bodies', () => {
  it('refuses a body over 3 MiB with 413 RequestEntityTooLarge and stores nothing', async () => {
    const h = await startHarness({ kubelet: false });
    const big = JSON.stringify({
      metadata: { name: 'big' },
      data: { blob: 'x'.repeat(3 * 1024 * 1024) },
    });
    const answer = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(answer.status).toBe(413);
    expect(json(answer)).toMatchObject({
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
      code: 413,
    });
    expect(h.emulator.store.get('/configmaps', 'default', 'big')).toBeUndefined();
    const under = JSON.stringify({
      metadata: { name: 'under' },
      data: { blob: 'x'.repeat(1024 * 1024) },
    });
    const created = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      headers: { 'content-type': 'application/json' },
      body: under,
    });
    expect(created.status).toBe(201);
  });

  it('answers 415 for a create body in a media type it does not speak', async () => {
    const h = await startHarness({ kubelet: false });
    const answer = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      headers: { 'content-type': 'text/plain' },
      body: '{"metadata":{"name":"t"}}',
    });
    expect(answer.status).toBe(415);
    expect(json(answer).message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
  });
});

describe('protobuf on the wire', () => {
  it('creates from a protobuf body, and answers get, list, errors and watch events in protobuf when asked', async () => {
    const h = await startHarness({ kubelet: false });
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'validators-private-keys' },
      data: { '001': Buffer.from('k1').toString('base64') },
      type: 'Opaque',
    };
    const created = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/secrets',
      headers: { 'content-type': PROTOBUF, accept: `${PROTOBUF}, application/json` },
      body: encodeObject(secret),
    });
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe(PROTOBUF);
    expect(decodeObject(created.body)).toMatchObject({
      kind: 'Secret',
      metadata: { name: 'validators-private-keys', namespace: 'default' },
      data: { '001': 'azE=' },
    });
    const stored = await h.core.readNamespacedSecret({
      name: 'validators-private-keys',
      namespace: 'default',
    });
    expect(stored.data?.['001']).toBe('azE=');
    const list = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/secrets',
      headers: { accept: PROTOBUF },
    });
    expect(decodeObject(list.body)).toMatchObject({
      kind: 'SecretList',
      items: [{ metadata: { name: 'validators-private-keys' } }],
    });
    const missing = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/secrets/nope',
      headers: { accept: PROTOBUF },
    });
    expect(missing.status).toBe(404);
    expect(decodeObject(missing.body)).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      code: 404,
    });
    const watch = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/secrets?watch=true',
      headers: { accept: PROTOBUF },
      untilBytes: 40,
    });
    expect(watch.headers['content-type']).toBe(`${PROTOBUF};stream=watch`);
    expect(readWatchFrames(watch.body).map((event) => event.type)).toEqual(['ADDED']);
  });

  it('answers 400 for a protobuf body that is not a Kubernetes object', async () => {
    const h = await startHarness({ kubelet: false });
    const answer = await send(h.emulator.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/secrets',
      headers: { 'content-type': PROTOBUF },
      body: Buffer.from('{"kind":"Secret"}'),
    });
    expect(answer.status).toBe(400);
    expect(json(answer).message).toContain('the body of the request could not be decoded');
  });
});

describe('a watcher that never reads', () => {
  it('is dropped once it holds 16 MiB unsent, so the emulator does not buffer without bound', async () => {
    const h = await startHarness({ kubelet: false });
    const port = Number(new URL(h.emulator.url).port);
    const socket = connect(port, '127.0.0.1');
    onTestFinished(() => {
      socket.destroy();
    });
    socket.pause(); // never reads
    socket.write(
      'GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    await waitFor(() => h.emulator.watchStats.open === 1, { what: 'the watch to open' });
    const blob = 'x'.repeat(256 * 1024);
    let peak = 0;
    for (let i = 0; i < 200 && h.emulator.watchStats.dropped === 0; i++) {
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `c${i}` }, data: { blob } },
      });
      peak = Math.max(peak, h.emulator.watchStats.bufferedBytes);
    }
    expect(h.emulator.watchStats.dropped).toBe(1);
    expect(h.emulator.watchStats.open).toBe(0);
    expect(h.emulator.watchStats.bufferedBytes).toBe(0);
    // Never more than the bound plus the one event that crossed it.
    expect(peak).toBeLessThanOrEqual(16 * 1024 * 1024 + 300 * 1024);
  });

  it('keeps a watcher that reads, even when the initial state it is sent is larger than the bound', async () => {
    const h = await startHarness({ kubelet: false, maxWatchBufferBytes: 256 * 1024 });
    const blob = 'y'.repeat(20 * 1024);
    for (let i = 0; i < 40; i++) {
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `s${i}` }, data: { blob } },
      });
    }
    const answer = await send(h.emulator.url, {
      path: '/api/v1/namespaces/default/configmaps?watch=true',
      untilBytes: 40 * 20 * 1024,
    });
    expect(answer.status).toBe(200);
    expect(h.emulator.watchStats.dropped).toBe(0);
  });
});
