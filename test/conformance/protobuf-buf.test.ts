// The emulator's protobuf bytes against Go's protobuf (buf convert, over the same upstream
// .proto files): decoding ours and re-encoding gives the very same bytes (field order, the
// fields Go always writes, map keys sorted), and the decoded content is the object's.
import { describe, expect, it } from 'vitest';
import { encodeMessage } from '../../src/kube-emulator/protobuf/codec.ts';
import { watchFrame } from '../../src/kube-emulator/protobuf/envelope.ts';
import { messageFor } from '../../src/kube-emulator/protobuf/registry.ts';
import { bufDecode, bufEncode } from '../support/buf.ts';
import { servedSamples } from '../kube-emulator/fixtures/served-samples.ts';

const kinds = [
  'v1/Pod',
  'v1/Secret',
  'v1/Service',
  'v1/Event',
  'coordination.k8s.io/v1/Lease',
  'apps/v1/StatefulSet',
  'apps/v1/Deployment',
  'v1/Status',
];

describe.concurrent('protobuf bytes, checked with buf convert (Go protobuf)', () => {
  it.each(kinds)('%s: buf decodes our bytes and re-encodes them to the same bytes', async (key) => {
    const sample = servedSamples[key];
    if (sample === undefined) throw new Error(`no sample ${key}`);
    const message = messageFor(String(sample.apiVersion), String(sample.kind));
    if (message === undefined) throw new Error(`no message for ${key}`);
    const ours = encodeMessage(message, sample);
    const decoded = (await bufDecode(message.typeName, ours)) as {
      metadata?: { name?: string };
      message?: string;
    };
    if (key === 'v1/Status') expect(decoded.message).toBe(sample.message);
    else expect(decoded.metadata?.name).toBe((sample.metadata as { name: string }).name);
    const theirs = await bufEncode(message.typeName, decoded);
    expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
  });

  it('agrees with buf on the special forms: a Time, an IntOrString string and a Quantity', async () => {
    const message = messageFor('apps/v1', 'Deployment');
    if (message === undefined) throw new Error('no Deployment message');
    const ours = encodeMessage(message, {
      metadata: { name: 'd', creationTimestamp: '2026-12-01T09:00:00Z' },
      spec: {
        strategy: { rollingUpdate: { maxSurge: '25%' } },
        template: { spec: { containers: [{ name: 'c', resources: { limits: { cpu: '500m' } } }] } },
      },
    });
    const decoded = (await bufDecode(message.typeName, ours)) as {
      metadata: { creationTimestamp: { seconds: string; nanos: number } };
      spec: {
        strategy: { rollingUpdate: { maxSurge: { type: string; intVal: number; strVal: string } } };
        template: {
          spec: { containers: { resources: { limits: Record<string, { string: string }> } }[] };
        };
      };
    };
    expect(decoded.metadata.creationTimestamp).toEqual({
      seconds: String(Date.parse('2026-12-01T09:00:00Z') / 1000),
      nanos: 0,
    });
    expect(decoded.spec.strategy.rollingUpdate.maxSurge).toEqual({
      type: '1',
      intVal: 0,
      strVal: '25%',
    });
    expect(decoded.spec.template.spec.containers[0]?.resources.limits.cpu).toEqual({
      string: '500m',
    });
  });

  it('frames a watch event as client-go reads it: a 4-byte length, then a metav1.WatchEvent whose object.raw is the enveloped object', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w' },
      data: { k: 'v' },
    };
    const frame = watchFrame('MODIFIED', object);
    const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0);
    expect(length).toBe(frame.length - 4);
    const event = (await bufDecode(
      'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent',
      frame.subarray(4),
    )) as {
      type: string;
      object: { raw: string };
    };
    expect(event.type).toBe('MODIFIED');
    const raw = Buffer.from(event.object.raw, 'base64');
    expect(raw.subarray(0, 4)).toEqual(Buffer.from([0x6b, 0x38, 0x73, 0x00]));
    const unknown = (await bufDecode(
      'k8s.io.apimachinery.pkg.runtime.Unknown',
      raw.subarray(4),
    )) as {
      typeMeta: { apiVersion: string; kind: string };
      raw: string;
    };
    expect(unknown.typeMeta).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
    const configMap = (await bufDecode(
      'k8s.io.api.core.v1.ConfigMap',
      Buffer.from(unknown.raw, 'base64'),
    )) as {
      metadata: { name: string };
      data: Record<string, string>;
    };
    expect(configMap.metadata.name).toBe('w');
    expect(configMap.data).toEqual({ k: 'v' });
  });
});
